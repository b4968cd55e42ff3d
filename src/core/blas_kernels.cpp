#include "core/blas_kernels.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"

namespace meshslice {
namespace {

// OpenBLAS's own functions, found at run time: the BLAS is whichever libblas.so.3 the system
// names, and only OpenBLAS has them (null for another). gotoblas_dynamic_init chooses the kernels
// (OPENBLAS_CORETYPE's, or the CPU's it knows, else Prescott's) unless chosen;
// gotoblas_dynamic_quit forgets the choice.
template <class Function>
Function* openblas_function(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, name));
}
using Text = char*();
using Step = void();

// OpenBLAS's name of the best kernels this CPU's instruction set runs ("": none past SSE3's).
const char* kernels_for_this_cpu() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

std::string& fallback_replaced() {  // the kernels OpenBLAS had chosen, when meshslice chose again
  static std::string kernels;
  return kernels;
}

}  // namespace

void avoid_fallback_blas_kernels() {
  Text* corename = openblas_function<Text>("openblas_get_corename");
  Step* quit = openblas_function<Step>("gotoblas_dynamic_quit");
  Step* init = openblas_function<Step>("gotoblas_dynamic_init");
  if (!corename || !quit || !init || std::getenv("OPENBLAS_CORETYPE")) return;
  // What OpenBLAS takes a CPU it does not know for (its dynamic.c: "Falling back to Prescott").
  const std::string chosen = corename();
  const char* better = kernels_for_this_cpu();
  if (chosen != "Prescott" || *better == '\0') return;
  setenv("OPENBLAS_CORETYPE", better, 1);  // what gotoblas_dynamic_init reads
  quit();
  init();
  unsetenv("OPENBLAS_CORETYPE");  // the programs this one starts choose for themselves
  fallback_replaced() = chosen;
}

std::string blas_kernels() {
  Text* config = openblas_function<Text>("openblas_get_config");
  Text* corename = openblas_function<Text>("openblas_get_corename");
  if (!config || !corename) return "";
  std::string text = concat(config(), ", with its ", corename(), " kernels");
  if (!fallback_replaced().empty())
    text += concat(" (it took this CPU for a ", fallback_replaced(),
                   "; meshslice chose these for its instruction set; OPENBLAS_CORETYPE "
                   "chooses others)");
  return text;
}

}  // namespace meshslice
