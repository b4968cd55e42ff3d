#include "exec/local_gemm_bf16.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <type_traits>

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"

#ifdef MESHSLICE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif
#include "exec/cublas_gemm_ex.hpp"

namespace meshslice {

namespace {
#ifdef MESHSLICE_HAVE_ONEDNN
// oneDNN reads and writes the operands in place: they must be in memory the host can touch.
constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
#endif

// The logical shape of op(x): x as stored, or its transpose.
std::size_t op_rows(const Matrix<bfloat16>& x, bool transpose) {
  return transpose ? x.extent(1) : x.extent(0);
}
std::size_t op_cols(const Matrix<bfloat16>& x, bool transpose) {
  return transpose ? x.extent(0) : x.extent(1);
}

#ifdef MESHSLICE_HAVE_ONEDNN
// op(x) (rows x cols) of x stored row-major, as oneDNN sees it: its transpose through strides.
dnnl::memory::desc onednn_matrix(std::size_t rows, std::size_t cols, bool transposed,
                                 dnnl::memory::data_type type) {
  const auto r = static_cast<dnnl::memory::dim>(rows), c = static_cast<dnnl::memory::dim>(cols);
  return {{r, c}, type, transposed ? dnnl::memory::dims{1, r} : dnnl::memory::dims{c, 1}};
}

// The matmul of bf16 operands into float, as the route makes it for each shape.
dnnl::matmul::desc onednn_bf16_matmul(std::size_t m, std::size_t n, std::size_t k, bool ta,
                                      bool tb) {
  using dt = dnnl::memory::data_type;
  return {onednn_matrix(m, k, ta, dt::bf16), onednn_matrix(k, n, tb, dt::bf16),
          onednn_matrix(m, n, false, dt::f32)};
}

// Whether oneDNN has a bf16 matmul for this CPU, asked of oneDNN itself once: Debian's oneDNN
// 2.6 has one with AVX-512 (AVX512-BF16, AMX, or emulated on AVX-512's core) and none for a CPU
// with AVX2 only (an AMD EPYC VM of the development machines), where making the primitive
// throws "could not create a primitive descriptor iterator" and a bf16 run stopped with it.
bool onednn_has_bf16_matmul() {
  static const bool has = [] {
    try {
      const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      dnnl::matmul::primitive_desc(onednn_bf16_matmul(16, 16, 16, false, false), engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return has;
}
#endif
}  // namespace

const char* bf16_route_name(Bf16GemmRoute route) {
  switch (route) {
    case Bf16GemmRoute::onednn: return "onednn";
    case Bf16GemmRoute::cublas: return "cublas";
    case Bf16GemmRoute::float_panels: return "float_panels";
  }
  return "?";
}

bool bf16_route_available(Bf16GemmRoute route) {
  switch (route) {
    case Bf16GemmRoute::float_panels: return true;
#ifdef MESHSLICE_HAVE_ONEDNN
    case Bf16GemmRoute::onednn: return kHostMemory && onednn_has_bf16_matmul();
#endif
#ifdef MESHSLICE_CUBLAS
    case Bf16GemmRoute::cublas: return std::is_same_v<ExecSpace, Kokkos::Cuda>;
#endif
    default: return false;
  }
}

const char* bf16_route_needs(Bf16GemmRoute route) {
  switch (route) {
    case Bf16GemmRoute::onednn:
      return "a CPU build with oneDNN (Debian's libdnnl-dev, found at configure time) on a CPU "
             "oneDNN has a bf16 matmul for (AVX-512: Debian's oneDNN 2.6 has none with AVX2 "
             "only)";
    case Bf16GemmRoute::cublas: return "a CUDA build with KokkosKernels' cuBLAS";
    case Bf16GemmRoute::float_panels: return "nothing: every build runs it";
  }
  return "?";
}

Bf16GemmRoute fastest_bf16_route() {
  for (const Bf16GemmRoute route : kBf16GemmRoutes)
    if (bf16_route_available(route)) return route;
  return Bf16GemmRoute::float_panels;
}

#ifdef MESHSLICE_HAVE_ONEDNN
// A matmul primitive per shape, transposes, alpha and beta, made the first time it is asked for
// (making one takes far longer than a small GEMM).
struct LocalGemmBf16::OneDnn {
  using Key =
      std::tuple<std::size_t, std::size_t, std::size_t, bool, bool, std::uint32_t, std::uint32_t>;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, dnnl::matmul> primitives;

  static std::uint32_t bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  }

  dnnl::matmul& primitive(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb,
                          float alpha, float beta) {
    const Key key{m, n, k, ta, tb, bits(alpha), bits(beta)};
    auto at = primitives.find(key);
    if (at != primitives.end()) return at->second;
    dnnl::primitive_attr attr;
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (beta != 0.0f) {  // dst = alpha a b + beta dst
      dnnl::post_ops sum;
      sum.append_sum(beta);
      attr.set_post_ops(sum);
    }
    return primitives
        .emplace(key, dnnl::matmul(dnnl::matmul::primitive_desc(onednn_bf16_matmul(m, n, k, ta, tb),
                                                                attr, engine)))
        .first->second;
  }

  void run(bool ta, bool tb, float alpha, const Matrix<bfloat16>& a, const Matrix<bfloat16>& b,
           float beta, const Matrix<float>& c) {
    using dt = dnnl::memory::data_type;
    const std::size_t m = c.extent(0), n = c.extent(1), k = op_cols(a, ta);
    dnnl::memory am(onednn_matrix(m, k, ta, dt::bf16), engine, a.data());
    dnnl::memory bm(onednn_matrix(k, n, tb, dt::bf16), engine, b.data());
    dnnl::memory cm(onednn_matrix(m, n, false, dt::f32), engine, c.data());
    primitive(m, n, k, ta, tb, alpha, beta)
        .execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
  }
};
#else
struct LocalGemmBf16::OneDnn {};
#endif

#ifdef MESHSLICE_CUBLAS
// bf16 operands, products summed in float.
struct LocalGemmBf16::CuBlas {
  CublasGemmEx gemm;
  void run(const ExecSpace& space, bool ta, bool tb, float alpha, const Matrix<bfloat16>& a,
           const Matrix<bfloat16>& b, float beta, const Matrix<float>& c) {
    gemm.run(space, ta, tb, static_cast<int>(c.extent(0)), static_cast<int>(c.extent(1)),
             static_cast<int>(op_cols(a, ta)), alpha, a.data(), static_cast<int>(a.extent(1)),
             b.data(), static_cast<int>(b.extent(1)), CUDA_R_16BF, beta, c.data(),
             CUBLAS_COMPUTE_32F);
  }
};
#else
struct LocalGemmBf16::CuBlas {};
#endif

LocalGemmBf16::LocalGemmBf16(Bf16GemmRoute route, std::size_t a_elements, std::size_t b_elements)
    : route_(route),
      region_name_(concat("meshslice::bf16_gemm[", bf16_route_name(route), "]")),
      a_elements_(a_elements),
      b_elements_(b_elements) {
  require(bf16_route_available(route), "the bf16 GEMM route ", bf16_route_name(route),
          " does not run here: it needs ", bf16_route_needs(route),
          "; float_panels runs in every build");
  switch (route) {
    case Bf16GemmRoute::float_panels:
      a_ = decltype(a_)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bf16_gemm_a"), a_elements);
      b_ = decltype(b_)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bf16_gemm_b"), b_elements);
      break;
    case Bf16GemmRoute::onednn: onednn_ = std::make_unique<OneDnn>(); break;
    case Bf16GemmRoute::cublas: cublas_ = std::make_unique<CuBlas>(); break;
  }
}

LocalGemmBf16::~LocalGemmBf16() = default;

void LocalGemmBf16::run(const ExecSpace& space, bool transpose_a, bool transpose_b, float alpha,
                        const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, float beta,
                        const Matrix<float>& c) {
  const std::size_t m = op_rows(a, transpose_a), k = op_cols(a, transpose_a);
  const std::size_t n = op_cols(b, transpose_b);
  MESHSLICE_ASSERT(op_rows(b, transpose_b) == k && c.extent(0) == m && c.extent(1) == n &&
                       elements(a) <= a_elements_ && elements(b) <= b_elements_,
                   "LocalGemmBf16: ", m, " x ", n, " x ", k, " does not fit a GEMM made for ",
                   a_elements_, " and ", b_elements_, " operand elements");
  const char* ta = transpose_a ? "T" : "N";
  const char* tb = transpose_b ? "T" : "N";
  // One BLAS call to the device-work counter (core/device_work_counter.hpp), whatever the route.
  const ProfilingRegion region(region_name_);
  switch (route_) {
    case Bf16GemmRoute::float_panels: {
      // The panels as the operands are stored (a transposed one stays transposed).
      const Matrix<float> af(a_.data(), a.extent(0), a.extent(1));
      const Matrix<float> bf(b_.data(), b.extent(0), b.extent(1));
      to_float(space, a, af);
      to_float(space, b, bf);
      blas_gemm(space, ta, tb, alpha, af, bf, beta, c);
      return;
    }
    case Bf16GemmRoute::onednn:
#ifdef MESHSLICE_HAVE_ONEDNN
      fence(space, "bf16_gemm: operands written");  // oneDNN reads them on its own threads
      onednn_->run(transpose_a, transpose_b, alpha, a, b, beta, c);
#endif
      return;
    case Bf16GemmRoute::cublas:
#ifdef MESHSLICE_CUBLAS
      cublas_->run(space, transpose_a, transpose_b, alpha, a, b, beta, c);
#endif
      return;
  }
}

}  // namespace meshslice
