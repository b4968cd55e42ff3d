// Every collective, blocking and non-blocking, MPI-native and ring, along every axis of the
// torus, gathering/scattering rows and columns, float and double, against the serial answer
// computed from the same global data. Values are small integers, so results compare exactly.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "comm/collectives.hpp"
#include "core/errors.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kRows = 3;  // odd local shapes catch index mix-ups
constexpr std::size_t kCols = 5;
const Axis kAxes[] = {Axis::dp, Axis::pp, Axis::row, Axis::col, Axis::tp};
const CollectiveImpl kImpls[] = {CollectiveImpl::native, CollectiveImpl::ring};
const MatrixDim kDims[] = {MatrixDim::rows, MatrixDim::cols};

// Identifies the ring this rank is on (its coordinates on the other axes), so that every ring
// of the torus carries different data.
std::uint64_t ring_id(Axis axis) {
  std::uint64_t id = 0;
  const bool in_tp = axis == Axis::tp;
  for (Axis other : {Axis::dp, Axis::pp, Axis::row, Axis::col}) {
    const bool on_ring = other == axis || (in_tp && (other == Axis::row || other == Axis::col));
    id = id * 131 + (on_ring ? 0 : torus().coord(other) + 1);
  }
  return id;
}

// Element (i, j) of the shard that ring rank p contributes; `salt` tells apart several inputs.
double shard_value(Axis axis, int p, std::size_t i, std::size_t j, int salt = 0) {
  return global_value(ring_id(axis) * 7 + salt, p, i, j);
}

template <class T>
Matrix<T> shard_of(Axis axis, int p, std::size_t rows, std::size_t cols, int salt = 0) {
  return make_matrix<T>(rows, cols, [&](std::size_t i, std::size_t j) {
    return shard_value(axis, p, i, j, salt);
  });
}

template <class T>
void expect_matrix(const Matrix<T>& actual,
                   const std::function<double(std::size_t, std::size_t)>& want,
                   const std::string& what) {
  auto host = to_host(actual);
  int mismatches = 0;
  for (std::size_t i = 0; i < host.extent(0); ++i)
    for (std::size_t j = 0; j < host.extent(1); ++j)
      if (static_cast<double>(host(i, j)) != want(i, j) && mismatches++ == 0)
        ADD_FAILURE() << what << ": element (" << i << "," << j << ") is " << host(i, j)
                      << ", expected " << want(i, j);
  EXPECT_EQ(mismatches, 0) << what;
}

std::string label(const char* op, Axis axis, CollectiveImpl impl, const char* extra = "") {
  return concat(op, " axis=", axis_name(axis), " impl=", impl_name(impl), " ", extra);
}

// Runs the request to completion by polling test(), the way a GEMM overlaps it.
void drive(Request request) {
  while (!request.test()) {
  }
  EXPECT_TRUE(request.complete());
}

CommOptions options_for(CollectiveImpl impl) {
  CommOptions options;
  options.impl = impl;
  options.packet_bytes = 16;  // several packets even for small shards: exercises the pipeline
  return options;
}

template <class T>
class Collectives : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Collectives, Scalars);

TYPED_TEST(Collectives, AllGather) {
  using T = TypeParam;
  for (Axis axis : kAxes)
    for (CollectiveImpl impl : kImpls)
      for (MatrixDim dim : kDims)
        for (bool blocking : {true, false}) {
          const auto& ring = torus().axis(axis);
          const int p = ring.size();
          const bool rows = dim == MatrixDim::rows;
          auto local = shard_of<T>(axis, ring.rank(), kRows, kCols);
          Matrix<T> out("out", rows ? p * kRows : kRows, rows ? kCols : p * kCols);
          if (blocking)
            all_gather(ring, local, out, dim, options_for(impl));
          else
            drive(iall_gather(ring, local, out, dim, options_for(impl)));
          expect_matrix<T>(
              out,
              [&](std::size_t i, std::size_t j) {
                return rows ? shard_value(axis, i / kRows, i % kRows, j)
                            : shard_value(axis, j / kCols, i, j % kCols);
              },
              label("all_gather", axis, impl, blocking ? dim_name(dim) : "non-blocking"));
        }
}

TYPED_TEST(Collectives, ReduceScatter) {
  using T = TypeParam;
  for (Axis axis : kAxes)
    for (CollectiveImpl impl : kImpls)
      for (MatrixDim dim : kDims)
        for (bool blocking : {true, false}) {
          const auto& ring = torus().axis(axis);
          const int p = ring.size();
          const bool rows = dim == MatrixDim::rows;
          const std::size_t in_rows = rows ? p * kRows : kRows;
          const std::size_t in_cols = rows ? kCols : p * kCols;
          auto in = shard_of<T>(axis, ring.rank(), in_rows, in_cols);
          auto in_before = to_host(in);
          Matrix<T> out("out", kRows, kCols);
          if (blocking)
            reduce_scatter(ring, in, out, dim, options_for(impl));
          else
            drive(ireduce_scatter(ring, in, out, dim, options_for(impl)));
          const int r = ring.rank();
          expect_matrix<T>(
              out,
              [&](std::size_t i, std::size_t j) {
                double sum = 0;
                for (int q = 0; q < p; ++q)
                  sum += rows ? shard_value(axis, q, r * kRows + i, j)
                              : shard_value(axis, q, i, r * kCols + j);
                return sum;
              },
              label("reduce_scatter", axis, impl, dim_name(dim)));
          expect_matrix<T>(
              in, [&](std::size_t i, std::size_t j) { return in_before(i, j); },
              label("reduce_scatter leaves its input", axis, impl));
        }
}

TYPED_TEST(Collectives, AllReduce) {
  using T = TypeParam;
  for (Axis axis : kAxes)
    for (CollectiveImpl impl : kImpls)
      for (bool in_place : {false, true}) {
        const auto& ring = torus().axis(axis);
        auto in = shard_of<T>(axis, ring.rank(), kRows, kCols);
        Matrix<T> out = in_place ? in : Matrix<T>("out", kRows, kCols);
        if (in_place)
          drive(iall_reduce(ring, in, out, options_for(impl)));
        else
          all_reduce(ring, in, out, options_for(impl));
        expect_matrix<T>(
            out,
            [&](std::size_t i, std::size_t j) {
              double sum = 0;
              for (int q = 0; q < ring.size(); ++q) sum += shard_value(axis, q, i, j);
              return sum;
            },
            label("all_reduce", axis, impl, in_place ? "in place" : ""));
      }
}

TYPED_TEST(Collectives, BroadcastFromEveryRoot) {
  using T = TypeParam;
  for (Axis axis : kAxes)
    for (CollectiveImpl impl : kImpls) {
      const auto& ring = torus().axis(axis);
      for (int root = 0; root < ring.size(); ++root) {
        auto buffer = shard_of<T>(axis, ring.rank(), kRows, kCols);
        if (root % 2 == 0)
          broadcast(ring, buffer, root, options_for(impl));
        else
          drive(ibroadcast(ring, buffer, root, options_for(impl)));
        expect_matrix<T>(
            buffer, [&](std::size_t i, std::size_t j) { return shard_value(axis, root, i, j); },
            label("broadcast", axis, impl, concat("root=", root).c_str()));
      }
    }
}

TYPED_TEST(Collectives, ReduceToEveryRoot) {
  using T = TypeParam;
  for (Axis axis : kAxes)
    for (CollectiveImpl impl : kImpls) {
      const auto& ring = torus().axis(axis);
      for (int root = 0; root < ring.size(); ++root) {
        auto in = shard_of<T>(axis, ring.rank(), kRows, kCols);
        auto out = make_matrix<T>(kRows, kCols, [](std::size_t, std::size_t) { return -1000.0; });
        if (root % 2 == 0)
          reduce(ring, in, out, root, options_for(impl));
        else
          drive(ireduce(ring, in, out, root, options_for(impl)));
        const bool is_root = ring.rank() == root;
        expect_matrix<T>(
            out,
            [&](std::size_t i, std::size_t j) {
              if (!is_root) return -1000.0;  // untouched away from the root
              double sum = 0;
              for (int q = 0; q < ring.size(); ++q) sum += shard_value(axis, q, i, j);
              return sum;
            },
            label("reduce", axis, impl, concat("root=", root).c_str()));
      }
    }
}

TYPED_TEST(Collectives, ShiftBothWays) {
  using T = TypeParam;
  for (Axis axis : kAxes)
    for (CollectiveImpl impl : kImpls)
      for (int displacement : {1, -1, 2, 0}) {
        const auto& ring = torus().axis(axis);
        auto in = shard_of<T>(axis, ring.rank(), kRows, kCols);
        Matrix<T> out("out", kRows, kCols);
        if (displacement % 2 == 0)
          shift(ring, in, out, displacement, options_for(impl));
        else
          drive(ishift(ring, in, out, displacement, options_for(impl)));
        const int source = ring.neighbour(-displacement);
        expect_matrix<T>(
            out, [&](std::size_t i, std::size_t j) { return shard_value(axis, source, i, j); },
            label("shift", axis, impl, concat("by ", displacement).c_str()));
      }
}

// Several non-blocking collectives in flight on the same rings at once, completed out of
// order: each draws its own tag, so messages never match the wrong operation.
TYPED_TEST(Collectives, ConcurrentNonBlockingOnOneRing) {
  using T = TypeParam;
  for (CollectiveImpl impl : kImpls) {
    const Axis axis = Axis::col;
    const auto& ring = torus().axis(axis);
    const int p = ring.size();
    auto a = shard_of<T>(axis, ring.rank(), kRows, kCols, 1);
    auto b = shard_of<T>(axis, ring.rank(), kRows, kCols, 2);
    auto c = shard_of<T>(axis, ring.rank(), p * kRows, kCols, 3);
    Matrix<T> gathered_a("ga", p * kRows, kCols), gathered_b("gb", kRows, p * kCols);
    Matrix<T> scattered("sc", kRows, kCols);
    auto options = options_for(impl);
    Request first = iall_gather(ring, a, gathered_a, MatrixDim::rows, options);
    Request second = iall_gather(ring, b, gathered_b, MatrixDim::cols, options);
    Request third = ireduce_scatter(ring, c, scattered, MatrixDim::rows, options);
    for (int spin = 0; spin < 3; ++spin) second.test();  // progress out of order
    third.wait();
    second.wait();
    first.wait();
    expect_matrix<T>(
        gathered_a,
        [&](std::size_t i, std::size_t j) { return shard_value(axis, i / kRows, i % kRows, j, 1); },
        label("concurrent all_gather rows", axis, impl));
    expect_matrix<T>(
        gathered_b,
        [&](std::size_t i, std::size_t j) { return shard_value(axis, j / kCols, i, j % kCols, 2); },
        label("concurrent all_gather cols", axis, impl));
    expect_matrix<T>(
        scattered,
        [&](std::size_t i, std::size_t j) {
          double sum = 0;
          for (int q = 0; q < p; ++q) sum += shard_value(axis, q, ring.rank() * kRows + i, j, 3);
          return sum;
        },
        label("concurrent reduce_scatter", axis, impl));
  }
}

// Shape errors are UserErrors raised on every rank before any message is sent, so no rank can
// be left waiting. (Every rank runs this test; a hang would trip the ctest timeout.)
TEST(CollectiveErrors, WrongShapesNameTheSizes) {
  const auto& ring = torus().axis(Axis::col);
  const int p = ring.size();
  Matrix<double> local("local", kRows, kCols);
  Matrix<double> wrong("wrong", p * kRows + 1, kCols);
  try {
    all_gather(ring, local, wrong, MatrixDim::rows);
    ADD_FAILURE() << "all_gather accepted a wrong output shape";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(concat(p * kRows + 1, "x", kCols)), std::string::npos) << message;
    EXPECT_NE(message.find(concat(p * kRows, "x", kCols)), std::string::npos) << message;
  }
  Matrix<double> indivisible("indivisible", kRows, p * kCols + (p > 1 ? 1 : 0));
  if (p > 1) {
    EXPECT_THROW(reduce_scatter(ring, indivisible, local, MatrixDim::cols), UserError);
  }
  Matrix<double> other("other", kRows + 1, kCols);
  EXPECT_THROW(all_reduce(ring, local, other), UserError);
  EXPECT_THROW(broadcast(ring, local, p), UserError);
  EXPECT_THROW(reduce(ring, local, local, -1), UserError);
  EXPECT_THROW(shift(ring, local, local, 1), UserError);
}

}  // namespace
}  // namespace meshslice::testing
