#pragma once
// Subnormal floats flushed to zero on the host: the x86 FTZ and DAZ bits of every host thread
// that runs kernels (the calling thread and Kokkos' OpenMP pool; each has its own MXCSR).
//
// Why: GCC 12 vectorizes core/fast_exp.hpp's clamped exp (under -fno-trapping-math) into masked
// code whose speed depends on the floating-point mode: GeLU's forward kernel took 5.5 ns an
// element of a 2048 x 2048 shard with the default mode and 0.6 ns with FTZ and DAZ (one OpenMP
// thread), and bench-h1024's step on 2 ranks spends 6-7 ms in it instead of 37-45 (2026-11-29).
// The subnormals come from GCC's jump threading, which copies the formula after fast_exp for
// each bound of its clamp; the vectorized loop computes every copy on every element, GeLU's and
// SiLU's x / (1 + e^88) among them, subnormal for |x| < 2. (-fno-thread-jumps removes them too,
// 29.6 -> 2.7 ms for GeLU on 2048 x 2048 activations of std 1 in the default mode, 2.4 ms either
// way with FTZ, but it moves where SiLU's derivative fuses multiply-adds; 2026-11-30.) Values
// below 1.2e-38 cannot change a float training step (its sums and norms are far larger, and GPUs
// flush them on their fast paths too): bf16 runs of laptop-lm, laptop-llama and bench-h1024 gave
// the same losses and checkpoints bit for bit with and without. Doubles flush only below
// 2.2e-308, so the double reference tests see no change. A no-op off x86.
namespace meshslice {

void flush_subnormals_on_host_threads();

}  // namespace meshslice
