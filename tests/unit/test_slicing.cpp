// Blocked slicing (paper Alg. 2) on one process: the reshape definition, round trips, and the
// error messages for shapes that cannot be sliced; views of whole rows.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "comm/slicing.hpp"
#include "core/errors.hpp"
#include "core/kokkos_types.hpp"

namespace meshslice {
namespace {

Matrix<double> numbered(std::size_t rows, std::size_t cols) {
  Matrix<double> m("numbered", rows, cols);
  auto host = Kokkos::create_mirror_view(m);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) host(i, j) = 1000.0 * i + j;
  Kokkos::deep_copy(m, host);
  return m;
}

template <class V>
auto host_copy(const V& v) {
  auto host = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(host, v);
  return host;
}

// X.reshape(R, C/(S*B), S, B)[:, :, s, :] written out with explicit loops.
double reshape_reference(std::size_t i, std::size_t k, int count, int index, int block) {
  const std::size_t group = k / block;
  const std::size_t offset = k % block;
  return 1000.0 * i + ((group * count + index) * block + offset);
}

TEST(Slicing, SliceColMatchesThePaperReshape) {
  for (int count : {1, 2, 4})
    for (int block : {1, 4, 8}) {
      const std::size_t rows = 3;
      const std::size_t cols = 64;
      auto x = numbered(rows, cols);
      for (int s = 0; s < count; ++s) {
        auto sub = host_copy(slice_col(x, count, s, block));
        ASSERT_EQ(sub.extent(1), cols / count);
        for (std::size_t i = 0; i < rows; ++i)
          for (std::size_t k = 0; k < sub.extent(1); ++k)
            ASSERT_EQ(sub(i, k), reshape_reference(i, k, count, s, block))
                << "S=" << count << " s=" << s << " B=" << block << " at (" << i << "," << k << ")";
      }
    }
}

TEST(Slicing, SliceRowIsSliceColOfTheTranspose) {
  const int count = 4;
  const int block = 2;
  auto x = numbered(32, 5);
  for (int s = 0; s < count; ++s) {
    auto sub = host_copy(slice_row(x, count, s, block));
    ASSERT_EQ(sub.extent(0), 8u);
    for (std::size_t k = 0; k < sub.extent(0); ++k)
      for (std::size_t j = 0; j < 5; ++j) {
        const std::size_t source_row = (k / block * count + s) * block + k % block;
        ASSERT_EQ(sub(k, j), 1000.0 * source_row + j);
      }
  }
}

TEST(Slicing, UnsliceOfAllSlicesRestoresTheShard) {
  for (MatrixDim dim : {MatrixDim::rows, MatrixDim::cols})
    for (int count : {1, 2, 4})
      for (int block : {1, 4, 8}) {
        const bool cols = dim == MatrixDim::cols;
        auto x = numbered(cols ? 6 : 64, cols ? 64 : 6);
        Matrix<double> rebuilt("rebuilt", x.extent(0), x.extent(1));
        for (int s = 0; s < count; ++s) {
          Matrix<double> sub("sub", cols ? 6 : 64 / count, cols ? 64 / count : 6);
          slice_into(x, sub, dim, {count, s, block});
          unslice_into(sub, rebuilt, dim, {count, s, block});
        }
        auto want = host_copy(x);
        auto got = host_copy(rebuilt);
        for (std::size_t i = 0; i < want.extent(0); ++i)
          for (std::size_t j = 0; j < want.extent(1); ++j)
            ASSERT_EQ(got(i, j), want(i, j)) << dim_name(dim) << " S=" << count << " B=" << block;
      }
}

TEST(Slicing, IndivisibleShapesAreClearErrors) {
  auto x = numbered(3, 40);
  try {
    slice_col(x, 4, 0, 8);
    FAIL() << "40 columns sliced into S=4 of B=8";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("40 columns"), std::string::npos) << message;
    EXPECT_NE(message.find("S*B=32"), std::string::npos) << message;
  }
  EXPECT_THROW(slice_row(x, 2, 0, 1), UserError);  // 3 rows
  EXPECT_THROW(slice_col(x, 2, 2, 1), UserError);  // s out of range
  EXPECT_THROW(slice_col(x, 0, 0, 1), UserError);  // S = 0
  EXPECT_THROW(slice_col(x, 1, 0, 0), UserError);  // B = 0
  Matrix<double> wrong("wrong", 3, 19);
  EXPECT_THROW(slice_into(x, wrong, MatrixDim::cols, {2, 0, 4}), UserError);
}

// A block of whole rows is a view into the matrix (row-major): writes through it land in the
// matrix, and a shape without memory gives a shape.
TEST(MatrixRows, AViewOfWholeRowsSharesTheMatrixMemory) {
  const Matrix<double> m = numbered(6, 4);
  const Matrix<double> rows = matrix_rows(m, 2, 3);
  ASSERT_EQ(rows.extent(0), 3u);
  ASSERT_EQ(rows.extent(1), 4u);
  EXPECT_EQ(rows.data(), m.data() + 2 * 4);
  Kokkos::deep_copy(rows, -1.0);
  const auto host = host_copy(m);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      EXPECT_EQ(host(i, j), i >= 2 && i < 5 ? -1.0 : 1000.0 * i + j) << i << "," << j;
  EXPECT_THROW(matrix_rows(m, 4, 3), std::logic_error);
  const Matrix<double> shape(static_cast<double*>(nullptr), 6, 4);
  const Matrix<double> shape_rows = matrix_rows(shape, 1, 2);
  EXPECT_EQ(shape_rows.data(), nullptr);
  EXPECT_EQ(shape_rows.extent(0), 2u);
  EXPECT_EQ(shape_rows.extent(1), 4u);
}

// A plan sizes its scratch from shapes without memory: elements() counts them from the extents,
// whichever View Kokkos has (the new View's size() is 0 without memory, the legacy one's not).
TEST(Elements, CountsAShapeWithoutMemoryByItsExtents) {
  const Matrix<double> shape(static_cast<double*>(nullptr), 6, 4);
  EXPECT_EQ(elements(shape), 24u);
  EXPECT_EQ(elements(Buffer<float>(static_cast<float*>(nullptr), 7)), 7u);
  EXPECT_EQ(elements(numbered(3, 5)), 15u);
  EXPECT_EQ(elements(Matrix<double>()), 0u);
}

}  // namespace
}  // namespace meshslice
