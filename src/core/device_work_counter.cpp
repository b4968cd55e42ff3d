#include "core/device_work_counter.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include "core/errors.hpp"

namespace meshslice {
namespace {

namespace tools = Kokkos::Tools::Experimental;
using SpaceHandle = Kokkos::Tools::SpaceHandle;

// The counts, and whatever a loaded tools library had installed before us (called after us).
DeviceWork counted;
tools::EventSet earlier{};
bool installed = false;
// For each open profiling region: whether it is a BLAS call's (nested BLAS regions and the
// kernels inside one are the one call).
std::vector<bool> regions;
int open_blas_calls = 0;
// The kernels, BLAS calls and fences begun and not yet ended, innermost last (their begins and
// ends nest): the name their time adds to, empty for a kernel inside a BLAS call.
struct Open {
  std::string name;
  std::chrono::steady_clock::time_point start;
};
std::vector<Open> open_work;

void begin_timing(std::string name) {
  open_work.push_back({std::move(name), std::chrono::steady_clock::now()});
}
void end_timing() {
  if (open_work.empty()) return;  // begun before the counter was installed
  const Open& work = open_work.back();
  if (!work.name.empty())
    counted.seconds_by_name[work.name] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - work.start).count();
  open_work.pop_back();
}

// KokkosKernels' GEMM, and the bf16 and tf32 local GEMMs' (exec/local_gemm_bf16.hpp: oneDNN's or
// cuBLAS's, exec/local_gemm_tf32.hpp: cuBLAS's, which open no KokkosKernels region; bf16's float
// panels' KokkosBlas::gemm nests inside) and cuBLAS's strided batches (exec/batched_gemm.hpp).
bool is_blas_call(const char* region) {
  for (const char* prefix : {"KokkosBlas::gemm", "meshslice::bf16_gemm", "meshslice::tf32_gemm",
                             "meshslice::batched_gemm"})
    if (std::strncmp(region, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

// Host memory by the name Kokkos gives its space ("Host", "CudaHostPinned", "HIPHostPinned", ...).
bool is_host_space(const SpaceHandle& space) {
  return std::strcmp(space.name, "Host") == 0 || std::strstr(space.name, "HostPinned") != nullptr;
}

void count_launch(const char* name) {
  if (open_blas_calls > 0) return begin_timing({});
  ++counted.launches;
  ++counted.by_name[name];
  begin_timing(name);
}

void begin_for(const char* name, std::uint32_t device, std::uint64_t* id) {
  count_launch(name);
  if (earlier.begin_parallel_for) earlier.begin_parallel_for(name, device, id);
}
void begin_reduce(const char* name, std::uint32_t device, std::uint64_t* id) {
  count_launch(name);
  if (earlier.begin_parallel_reduce) earlier.begin_parallel_reduce(name, device, id);
}
void begin_scan(const char* name, std::uint32_t device, std::uint64_t* id) {
  count_launch(name);
  if (earlier.begin_parallel_scan) earlier.begin_parallel_scan(name, device, id);
}
void end_for(std::uint64_t id) {
  end_timing();
  if (earlier.end_parallel_for) earlier.end_parallel_for(id);
}
void end_reduce(std::uint64_t id) {
  end_timing();
  if (earlier.end_parallel_reduce) earlier.end_parallel_reduce(id);
}
void end_scan(std::uint64_t id) {
  end_timing();
  if (earlier.end_parallel_scan) earlier.end_parallel_scan(id);
}
void push_region(const char* name) {
  const bool blas = is_blas_call(name);
  if (blas && open_blas_calls++ == 0) {
    ++counted.blas_calls;
    ++counted.by_name[name];
    begin_timing(name);
  }
  regions.push_back(blas);
  if (earlier.push_region) earlier.push_region(name);
}
void pop_region() {
  if (!regions.empty()) {
    if (regions.back() && --open_blas_calls == 0) end_timing();
    regions.pop_back();
  }
  if (earlier.pop_region) earlier.pop_region();
}
// The device id Kokkos gives a global fence's callback (tools::int_for_synchronization_reason of
// GlobalDeviceSynchronization); an instance's id has its backend's type bits and an instance
// number from 1, so it is never 0.
constexpr std::uint32_t kGlobalFenceDevice = 0;

void begin_fence(const char* name, std::uint32_t device, std::uint64_t* id) {
  ++counted.fences;
  ++counted.fences_by_name[name];
  if (device == kGlobalFenceDevice) {
    ++counted.global_fences;
    ++counted.global_fences_by_name[name];
  }
  begin_timing(concat("fence ", name));
  if (earlier.begin_fence) earlier.begin_fence(name, device, id);
}
void end_fence(std::uint64_t id) {
  end_timing();
  if (earlier.end_fence) earlier.end_fence(id);
}
void begin_deep_copy(SpaceHandle dst_space, const char* dst_name, const void* dst,
                     SpaceHandle src_space, const char* src_name, const void* src,
                     std::uint64_t bytes) {
  ++counted.copies;
  if (is_host_space(dst_space) != is_host_space(src_space)) ++counted.host_device_copies;
  if (earlier.begin_deep_copy)
    earlier.begin_deep_copy(dst_space, dst_name, dst, src_space, src_name, src, bytes);
}
void allocate(SpaceHandle space, const char* label, const void* pointer, std::uint64_t bytes) {
  ++counted.allocations;
  ++counted.allocations_by_name[label];
  if (earlier.allocate_data) earlier.allocate_data(space, label, pointer, bytes);
}

// The counts (or seconds) of `now` less those of `before`, the names that grew.
template <class Number>
std::map<std::string, Number> counts_since(const std::map<std::string, Number>& now,
                                           const std::map<std::string, Number>& before) {
  std::map<std::string, Number> since;
  for (const auto& [name, count] : now) {
    const auto earlier_count = before.find(name);
    const Number grew = count - (earlier_count == before.end() ? 0 : earlier_count->second);
    if (grew > 0) since[name] = grew;
  }
  return since;
}

// The `count` largest entries of a by-name map, each written by `write`.
template <class Number, class Write>
std::string largest(const std::map<std::string, Number>& numbers, std::size_t count, Write write) {
  std::vector<std::pair<Number, std::string>> names;
  for (const auto& [name, n] : numbers) names.emplace_back(n, name);
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < count; ++i)
    text += concat(i > 0 ? ", " : "", names[i].second, " ", write(names[i].first));
  return text;
}

void needs_no_global_fences(std::uint32_t, Kokkos_Tools_ToolSettings* settings) {
  settings->requires_global_fencing = false;
}

}  // namespace

DeviceWork DeviceWork::operator-(const DeviceWork& before) const {
  DeviceWork d;
  d.launches = launches - before.launches;
  d.blas_calls = blas_calls - before.blas_calls;
  d.fences = fences - before.fences;
  d.copies = copies - before.copies;
  d.host_device_copies = host_device_copies - before.host_device_copies;
  d.allocations = allocations - before.allocations;
  d.allocations_by_name = counts_since(allocations_by_name, before.allocations_by_name);
  d.by_name = counts_since(by_name, before.by_name);
  d.fences_by_name = counts_since(fences_by_name, before.fences_by_name);
  d.global_fences = global_fences - before.global_fences;
  d.global_fences_by_name = counts_since(global_fences_by_name, before.global_fences_by_name);
  d.seconds_by_name = counts_since(seconds_by_name, before.seconds_by_name);
  return d;
}

void install_device_work_counter() {
  tools::EventSet events = tools::get_callbacks();
  if (installed && events.begin_parallel_for == begin_for) return;
  installed = true;
  earlier = events;
  events.begin_parallel_for = begin_for;
  events.begin_parallel_reduce = begin_reduce;
  events.begin_parallel_scan = begin_scan;
  events.end_parallel_for = end_for;
  events.end_parallel_reduce = end_reduce;
  events.end_parallel_scan = end_scan;
  events.push_region = push_region;
  events.pop_region = pop_region;
  events.begin_fence = begin_fence;
  events.end_fence = end_fence;
  events.begin_deep_copy = begin_deep_copy;
  events.allocate_data = allocate;
  // Asked by Kokkos::initialize only (so only when installed before it): counting needs no
  // fence around every kernel, which Kokkos inserts for a tool that does not say so (612 of a
  // bench-h1024 step's 764 fences on Kokkos 4.6.99 were those).
  if (!earlier.request_tool_settings) events.request_tool_settings = needs_no_global_fences;
  tools::set_callbacks(events);
}

bool device_work_counts_fences() { return KOKKOS_VERSION >= 30500; }

DeviceWork device_work() { return counted; }

std::string describe(const DeviceWork& work) {
  return concat(work.launches, " kernel launches, ", work.blas_calls, " BLAS calls, ",
                device_work_counts_fences() ? concat(work.fences) : std::string("(uncounted)"),
                " fences, ", work.copies, " copies (", work.host_device_copies, " host-device), ",
                work.allocations, " allocations");
}

std::string busiest_names(const std::map<std::string, std::uint64_t>& counts, std::size_t count) {
  return largest(counts, count, [](std::uint64_t n) { return concat(n); });
}

std::string busiest_names(const std::map<std::string, double>& seconds, std::size_t count) {
  return largest(seconds, count, [](double s) { return concat(std::round(s * 1e4) / 10, " ms"); });
}

}  // namespace meshslice
