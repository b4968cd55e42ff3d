// Partial AllGather / ReduceScatter of MeshSlice: for S in {1,2,4} and B in {1,4,8}, on the
// column ring (slicing columns, as for A in the OS dataflow) and the row ring (slicing rows, as
// for B), checked element by element against the global data in the paper's order, and
// reassembled over all s into the full collective.
#include <gtest/gtest.h>

#include "comm/partial_collectives.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kSliced = 32;  // divisible by every S*B tested
constexpr std::size_t kOther = 3;

struct Setup {
  Axis axis;
  MatrixDim dim;
};
const Setup kSetups[] = {{Axis::col, MatrixDim::cols}, {Axis::row, MatrixDim::rows}};

double value(Axis axis, int p, std::size_t along, std::size_t across, int salt) {
  // `along` indexes the sliced dimension, `across` the other one.
  return global_value(1000 + salt * 10 + static_cast<int>(axis), p, along,
                      across + 100 * torus().coord(axis == Axis::col ? Axis::row : Axis::col));
}

template <class T>
Matrix<T> shard(const Setup& setup, int p, std::size_t along_extent, int salt) {
  const bool cols = setup.dim == MatrixDim::cols;
  return make_matrix<T>(cols ? kOther : along_extent, cols ? along_extent : kOther,
                        [&](std::size_t i, std::size_t j) {
                          return value(setup.axis, p, cols ? j : i, cols ? i : j, salt);
                        });
}

// Index along the sliced dim of the shard that position `k` of sub-shard s came from.
std::size_t source(std::size_t k, int count, int index, int block) {
  return (k / block * count + index) * block + k % block;
}

template <class T>
class PartialCollectives : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PartialCollectives, Scalars);

TYPED_TEST(PartialCollectives, AllGatherOfEverySliceMatchesThePaperOrder) {
  using T = TypeParam;
  for (const Setup& setup : kSetups)
    for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring})
      for (int count : {1, 2, 4})
        for (int block : {1, 4, 8}) {
          const auto& ring = torus().axis(setup.axis);
          const int p = ring.size();
          const bool cols = setup.dim == MatrixDim::cols;
          CommOptions options;
          options.impl = impl;
          auto local = shard<T>(setup, ring.rank(), kSliced, 0);
          const std::size_t sub = kSliced / count;
          Matrix<T> full("full", cols ? kOther : p * kSliced, cols ? p * kSliced : kOther);
          all_gather(ring, local, full, setup.dim, options);
          Matrix<T> reassembled("reassembled", full.extent(0), full.extent(1));
          for (int s = 0; s < count; ++s) {
            Matrix<T> part("part", cols ? kOther : p * sub, cols ? p * sub : kOther);
            partial_all_gather(ring, local, part, setup.dim, {count, s, block}, options);
            auto host = to_host(part);
            int mismatches = 0;
            for (int q = 0; q < p; ++q)
              for (std::size_t k = 0; k < sub; ++k)
                for (std::size_t o = 0; o < kOther; ++o) {
                  const std::size_t along = q * sub + k;
                  const double got = cols ? host(o, along) : host(along, o);
                  const double want = value(setup.axis, q, source(k, count, s, block), o, 0);
                  if (got != want) ++mismatches;
                }
            EXPECT_EQ(mismatches, 0) << "partial all_gather " << dim_name(setup.dim)
                                     << " S=" << count << " s=" << s << " B=" << block;
            // Put rank q's piece back into block q of the reassembled full gather.
            for (int q = 0; q < p; ++q) {
              auto range_part = std::make_pair(q * sub, (q + 1) * sub);
              auto range_full = std::make_pair(q * kSliced, (q + 1) * kSliced);
              Matrix<T> piece("piece", cols ? kOther : sub, cols ? sub : kOther);
              Matrix<T> target("target", cols ? kOther : kSliced, cols ? kSliced : kOther);
              if (cols) {
                Kokkos::deep_copy(piece, Kokkos::subview(part, Kokkos::ALL, range_part));
                Kokkos::deep_copy(target, Kokkos::subview(reassembled, Kokkos::ALL, range_full));
              } else {
                Kokkos::deep_copy(piece, Kokkos::subview(part, range_part, Kokkos::ALL));
                Kokkos::deep_copy(target, Kokkos::subview(reassembled, range_full, Kokkos::ALL));
              }
              unslice_into(piece, target, setup.dim, {count, s, block});
              if (cols)
                Kokkos::deep_copy(Kokkos::subview(reassembled, Kokkos::ALL, range_full), target);
              else
                Kokkos::deep_copy(Kokkos::subview(reassembled, range_full, Kokkos::ALL), target);
            }
          }
          auto want = to_host(full);
          auto got = to_host(reassembled);
          int mismatches = 0;
          for (std::size_t i = 0; i < want.extent(0); ++i)
            for (std::size_t j = 0; j < want.extent(1); ++j)
              if (want(i, j) != got(i, j)) ++mismatches;
          EXPECT_EQ(mismatches, 0)
              << "partial all_gathers over all s reassemble the full one: " << dim_name(setup.dim)
              << " S=" << count << " B=" << block;
        }
}

TYPED_TEST(PartialCollectives, ReduceScatterFillsExactlySliceS) {
  using T = TypeParam;
  for (const Setup& setup : kSetups)
    for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring})
      for (int count : {1, 2, 4})
        for (int block : {1, 4, 8}) {
          const auto& ring = torus().axis(setup.axis);
          const int p = ring.size();
          const int r = ring.rank();
          const bool cols = setup.dim == MatrixDim::cols;
          CommOptions options;
          options.impl = impl;
          const std::size_t sub = kSliced / count;
          const double untouched = -777;
          auto out = make_matrix<T>(cols ? kOther : kSliced, cols ? kSliced : kOther,
                                    [&](std::size_t, std::size_t) { return untouched; });
          for (int s = 0; s < count; s += 2) {  // even slices only: odd ones must stay untouched
            auto contribution = shard<T>(setup, r, p * sub, s + 1);
            Request request = ipartial_reduce_scatter(ring, contribution, out, setup.dim,
                                                      {count, s, block}, options);
            while (!request.test()) {
            }
          }
          auto host = to_host(out);
          int mismatches = 0;
          for (std::size_t along = 0; along < kSliced; ++along) {
            const int slice = static_cast<int>(along / block % count);
            const std::size_t k = along / (block * count) * block + along % block;
            for (std::size_t o = 0; o < kOther; ++o) {
              double want = untouched;
              if (slice % 2 == 0) {
                want = 0;
                for (int q = 0; q < p; ++q) want += value(setup.axis, q, r * sub + k, o, slice + 1);
              }
              const double got = cols ? host(o, along) : host(along, o);
              if (got != want) ++mismatches;
            }
          }
          EXPECT_EQ(mismatches, 0)
              << "partial reduce_scatter " << dim_name(setup.dim) << " S=" << count
              << " B=" << block << " impl=" << impl_name(impl);
        }
}

// A bf16 run's operands travel in bf16: the rounded gather holds, bit for bit, the float
// gather's elements rounded to bf16, native and ring, through host mirrors or not.
TEST(PartialCollectives, RoundedAllGatherIsTheFloatGatherRoundedToBf16) {
  for (const auto& setup : kSetups)
    for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring})
      for (const bool staged : {false, true})
        for (int count : {1, 4})
          for (int block : {1, 8}) {
            const auto& ring = torus().axis(setup.axis);
            const int p = ring.size();
            const bool cols = setup.dim == MatrixDim::cols;
            CommOptions options;
            options.impl = impl;
            options.stage_through_host = staged;
            // Thirds: values bf16 must round (the shard's own are small integers).
            const auto integers = to_host(shard<float>(setup, ring.rank(), kSliced, 0));
            const auto local = make_matrix<float>(integers.extent(0), integers.extent(1),
                                                  [&](std::size_t i, std::size_t j) {
                                                    return integers(i, j) / 3.0 + 0.1;
                                                  });
            const std::size_t sub = kSliced / count;
            const std::size_t rows = cols ? kOther : p * sub, width = cols ? p * sub : kOther;
            for (int s = 0; s < count; ++s) {
              Matrix<float> part("part", rows, width);
              Matrix<bfloat16> rounded("rounded", rows, width);
              partial_all_gather(ring, local, part, setup.dim, {count, s, block}, options);
              ipartial_all_gather_rounded(ring, local, rounded, setup.dim, {count, s, block},
                                          options)
                  .wait();
              const auto want = to_host(part);
              const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rounded);
              int mismatches = 0, inexact = 0;
              for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < width; ++j) {
                  if (got(i, j).bits != to_bfloat16(want(i, j)).bits) ++mismatches;
                  if (to_float(got(i, j)) != want(i, j)) ++inexact;
                }
              EXPECT_EQ(mismatches, 0)
                  << dim_name(setup.dim) << " S=" << count << " s=" << s << " B=" << block
                  << " impl=" << impl_name(impl) << (staged ? " staged" : "");
              EXPECT_GT(inexact, 0) << "the data should need rounding";
            }
          }
}

TEST(PartialCollectiveErrors, IndivisibleShapesNameTheSizes) {
  const auto& ring = torus().axis(Axis::col);
  Matrix<double> local("local", kOther, 30);
  Matrix<double> out("out", kOther, 30 * ring.size());
  try {
    partial_all_gather(ring, local, out, MatrixDim::cols, {4, 0, 8});
    ADD_FAILURE() << "30 columns were sliced into S=4 of B=8";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("S*B=32"), std::string::npos) << message;
    EXPECT_NE(message.find("30"), std::string::npos) << message;
  }
  EXPECT_THROW(partial_all_gather(ring, local, out, MatrixDim::cols, {2, 2, 1}), UserError);
  EXPECT_THROW(partial_reduce_scatter(ring, out, local, MatrixDim::cols, {0, 0, 1}), UserError);
}

}  // namespace
}  // namespace meshslice::testing
