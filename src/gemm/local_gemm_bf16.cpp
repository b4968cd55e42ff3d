#include "gemm/local_gemm_bf16.hpp"

#include <map>
#include <tuple>

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"

#ifdef MESHSLICE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace meshslice {

namespace {
// oneDNN reads and writes the operands in place: they must be in memory the host can touch.
constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
}  // namespace

const char* bf16_route_name(Bf16GemmRoute route) {
  switch (route) {
    case Bf16GemmRoute::onednn: return "onednn";
    case Bf16GemmRoute::float_panels: return "float_panels";
  }
  return "?";
}

bool bf16_route_available(Bf16GemmRoute route) {
  if (route == Bf16GemmRoute::float_panels) return true;
#ifdef MESHSLICE_HAVE_ONEDNN
  return kHostMemory;
#else
  return false;
#endif
}

#ifdef MESHSLICE_HAVE_ONEDNN
// A matmul primitive per shape and beta, made once (making one takes far longer than a small
// GEMM).
struct LocalGemmBf16::OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::tuple<std::size_t, std::size_t, std::size_t, bool>, dnnl::matmul> primitives;

  static dnnl::memory::desc matrix(std::size_t rows, std::size_t cols,
                                   dnnl::memory::data_type type) {
    return {{static_cast<dnnl::memory::dim>(rows), static_cast<dnnl::memory::dim>(cols)},
            type,
            dnnl::memory::format_tag::ab};
  }

  dnnl::matmul& primitive(std::size_t m, std::size_t n, std::size_t k, bool accumulate) {
    const auto key = std::make_tuple(m, n, k, accumulate);
    auto at = primitives.find(key);
    if (at != primitives.end()) return at->second;
    using dt = dnnl::memory::data_type;
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      attr.set_post_ops(sum);
    }
    const dnnl::matmul::desc desc(matrix(m, k, dt::bf16), matrix(k, n, dt::bf16),
                                  matrix(m, n, dt::f32));
    return primitives.emplace(key, dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine)))
        .first->second;
  }

  void run(const Matrix<bfloat16>& a, const Matrix<bfloat16>& b, bool accumulate,
           const Matrix<float>& c) {
    using dt = dnnl::memory::data_type;
    const std::size_t m = c.extent(0), n = c.extent(1), k = a.extent(1);
    dnnl::memory am(matrix(m, k, dt::bf16), engine, a.data());
    dnnl::memory bm(matrix(k, n, dt::bf16), engine, b.data());
    dnnl::memory cm(matrix(m, n, dt::f32), engine, c.data());
    primitive(m, n, k, accumulate)
        .execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
  }
};
#else
struct LocalGemmBf16::OneDnn {};
#endif

LocalGemmBf16::LocalGemmBf16(Bf16GemmRoute route, std::size_t m, std::size_t n, std::size_t k)
    : route_(route), m_(m), n_(n), k_(k) {
  require(bf16_route_available(route), "the bf16 GEMM route ", bf16_route_name(route),
          " is not in this build (onednn: build on a CPU with oneDNN, Debian's libdnnl-dev, "
          "found at configure time); use float_panels");
  if (route == Bf16GemmRoute::float_panels) {
    a_ = Matrix<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bf16_gemm_a"), m, k);
    b_ = Matrix<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bf16_gemm_b"), k, n);
  } else {
    onednn_ = std::make_unique<OneDnn>();
  }
}

LocalGemmBf16::~LocalGemmBf16() = default;

void LocalGemmBf16::run(const ExecSpace& space, const Matrix<bfloat16>& a,
                        const Matrix<bfloat16>& b, float beta, const Matrix<float>& c) {
  const std::size_t m = a.extent(0), k = a.extent(1), n = b.extent(1);
  MESHSLICE_ASSERT(b.extent(0) == k && c.extent(0) == m && c.extent(1) == n && m <= m_ && n <= n_ &&
                       k <= k_ && (beta == 0.0f || beta == 1.0f),
                   "LocalGemmBf16: ", m, " x ", n, " x ", k, " (beta ", beta,
                   ") does not fit a GEMM made for ", m_, " x ", n_, " x ", k_);
  if (route_ == Bf16GemmRoute::float_panels) {
    const Matrix<float> af(a_.data(), m, k), bf(b_.data(), k, n);
    to_float(space, a, af);
    to_float(space, b, bf);
    blas_gemm(space, "N", "N", 1.0f, af, bf, beta, c);
    return;
  }
#ifdef MESHSLICE_HAVE_ONEDNN
  fence(space, "bf16_gemm: operands written");  // oneDNN reads them on its own threads
  onednn_->run(a, b, beta != 0.0f, c);
#endif
}

}  // namespace meshslice
