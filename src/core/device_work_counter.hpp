#pragma once
// What a stretch of the program asked of its device, counted through Kokkos tools callbacks the
// app installs itself (no tools library needed): kernel launches (parallel_for, _reduce and
// _scan), BLAS calls (KokkosBlas::gemm, seen as the profiling region KokkosKernels opens around
// every call, and the meshslice::bf16_gemm[route], tf32_gemm and batched_gemm regions of the
// GEMMs that call a library themselves; kernels launched inside one count as the call), fences,
// deep copies, of which those between host and device memory, and allocations of Kokkos memory
// (a plan makes its buffers once: a step makes none).
// On a GPU each launch and fence costs microseconds of latency whatever the kernel's size, so a
// training step's counts are a budget (tests hold it).
// Each is also timed, from its begin to its end on the host: on a CPU (and on a GPU with
// CUDA_LAUNCH_BLOCKING=1) that is the kernel's run, otherwise only its issue, and a fence's is how
// long the host waited there. A tools library loaded through KOKKOS_TOOLS_LIBS keeps working: its
// callbacks are called after ours.
//
//     install_device_work_counter();          // before Kokkos::initialize and after it
//     const DeviceWork before = device_work();
//     ...                                      // the step
//     const DeviceWork step = device_work() - before;
#include <cstdint>
#include <map>
#include <string>

namespace meshslice {

struct DeviceWork {
  std::uint64_t launches = 0, blas_calls = 0, fences = 0, copies = 0, host_device_copies = 0;
  std::uint64_t allocations = 0;
  std::map<std::string, std::uint64_t> allocations_by_name;  // by the views' labels
  // Launches and BLAS calls by kernel name (a BLAS call by its region's, "KokkosBlas::gemm[...]").
  std::map<std::string, std::uint64_t> by_name;
  std::map<std::string, std::uint64_t> fences_by_name;  // the fences by their labels
  // Of those, the fences of the whole device (Kokkos::fence(), a deep_copy without an instance):
  // each waits for every instance, the compute stream's GEMMs too, so a step should have none.
  std::uint64_t global_fences = 0;
  std::map<std::string, std::uint64_t> global_fences_by_name;
  // Seconds from begin to end on the host, by the names of by_name, and the fences' by "fence "
  // and their label.
  std::map<std::string, double> seconds_by_name;
  // Kernel launches and BLAS calls: what the issue of work costs in latency.
  std::uint64_t launches_and_blas() const { return launches + blas_calls; }
  DeviceWork operator-(const DeviceWork& before) const;
};

// Installs the callbacks (again: nothing, unless a tools library loaded since replaced them).
// Best before Kokkos::initialize when no tools library is named (KOKKOS_TOOLS_LIBS, ...): the
// counter then tells Kokkos it needs no global fences, which Kokkos otherwise puts around every
// kernel of a run with a tool; after it, the callbacks chain to the library's. Fences are counted
// where Kokkos reports them to tools (from Kokkos 3.5; Debian's 3.4 does not).
void install_device_work_counter();
// Whether Kokkos reports fences to tools in this build.
bool device_work_counts_fences();
// The counts since install_device_work_counter() on this process.
DeviceWork device_work();
// "12 kernel launches, 3 BLAS calls, 4 fences, 2 copies (0 host-device)".
std::string describe(const DeviceWork& work);
// The `count` names with the most counts in a by-name map (by_name, fences_by_name):
// "attention_fused_forward 4, ...".
std::string busiest_names(const std::map<std::string, std::uint64_t>& counts, std::size_t count);
// The same for seconds_by_name, in milliseconds: "KokkosBlas::gemm[...] 41.2 ms, ...".
std::string busiest_names(const std::map<std::string, double>& seconds, std::size_t count);

}  // namespace meshslice
