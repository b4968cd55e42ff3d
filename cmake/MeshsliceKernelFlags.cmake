# meshslice_kernel_flags(target): the code generation flags of the training step's kernels, for
# the library and for every target that instantiates model/*_impl.hpp itself (the hardware mode
# of meshslice-train, its test): the same kernels must be compiled the same way everywhere.
#   -fno-trapping-math  the element-wise kernels (GeLU and softmax through core/fast_exp.hpp)
#                       vectorize only where the compiler may evaluate both sides of a
#                       comparison; nothing here uses FP traps
#   -fno-math-errno     std::sqrt and friends need not set errno (nothing here reads it), so
#                       the loops that call them vectorize: AdamW's update ran 3x slower without
#   -march=native       with MESHSLICE_NATIVE: the building machine's widest vectors
function(meshslice_kernel_flags target)
  target_compile_options(${target} PRIVATE -fno-trapping-math -fno-math-errno)
  if(MESHSLICE_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
endfunction()
