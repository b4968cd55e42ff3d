// core/stream_copy.hpp: streamed copies move every byte, at any alignment and length, and touch
// nothing outside the destination range.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/kokkos_types.hpp"
#include "core/stream_copy.hpp"

namespace meshslice {
namespace {

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 131 + seed);
  return v;
}

TEST(StreamCopy, BytesAtEveryAlignmentAndLength) {
  const std::vector<std::size_t> lengths = {0, 1, 15, 16, 17, 63, 64, 65, 127, 200, 4099};
  for (std::size_t length : lengths)
    for (std::size_t dst_offset = 0; dst_offset < 17; dst_offset += 3)
      for (std::size_t src_offset : {std::size_t(0), std::size_t(5)}) {
        const auto src = pattern(length + 64, 7);
        auto dst = pattern(length + 64, 99);
        const auto before = dst;
        stream_copy_bytes(dst.data() + dst_offset, src.data() + src_offset, length);
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= dst_offset && i < dst_offset + length;
          ASSERT_EQ(dst[i], inside ? src[src_offset + i - dst_offset] : before[i])
              << "length " << length << " dst offset " << dst_offset << " src offset " << src_offset
              << " byte " << i;
        }
      }
}

template <class T>
void check_large_copy(std::size_t count, std::size_t dst_offset, std::size_t src_offset) {
  const std::size_t total = count + 64;
  Buffer<T, Kokkos::HostSpace> src("src", total), dst("dst", total);
  // Every byte of every value differs between src and dst (no zero low mantissa bytes), so
  // a byte left uncopied shows.
  const T untouched = T(-1.2345678);
  for (std::size_t i = 0; i < total; ++i) {
    src(i) = T(i % 1009) + T(1) / T(i + 3);
    dst(i) = untouched;
  }
  large_copy(Kokkos::DefaultHostExecutionSpace(),
             Kokkos::subview(dst, std::make_pair(dst_offset, dst_offset + count)),
             Kokkos::subview(src, std::make_pair(src_offset, src_offset + count)));
  Kokkos::DefaultHostExecutionSpace().fence();
  for (std::size_t i = 0; i < total; ++i) {
    const bool inside = i >= dst_offset && i < dst_offset + count;
    ASSERT_EQ(dst(i), inside ? src(src_offset + i - dst_offset) : untouched)
        << count << " elements, element " << i;
  }
}

TEST(StreamCopy, LargeViewsStreamInChunksWithUnevenEnds) {
  // Past the threshold, not a whole number of 1 MiB chunks, destination off 16-byte alignment.
  const std::size_t floats = kStreamCopyMinBytes / sizeof(float) + (1 << 18) + 37;
  check_large_copy<float>(floats, 1, 3);
  check_large_copy<float>(floats, 4, 0);
  check_large_copy<double>(kStreamCopyMinBytes / sizeof(double) + 11, 3, 1);
}

// Past the threshold too, views of the same size but another shape are refused as deep_copy
// refuses them, not copied element by element.
TEST(StreamCopy, LargeViewsOfAnotherShapeAreRefused) {
  const std::size_t rows = kStreamCopyMinBytes / sizeof(float) / 64;
  Matrix<float, Kokkos::HostSpace> a("a", rows, 64), b("b", 64, rows);
  EXPECT_THROW(large_copy(Kokkos::DefaultHostExecutionSpace(), a, b), std::runtime_error);
}

// Past the threshold, views whose elements lie in another order are copied element by element
// (by deep_copy), and a copy onto itself leaves the view as it was.
TEST(StreamCopy, LargeViewsInAnotherLayoutKeepTheirElements) {
  const std::size_t rows = kStreamCopyMinBytes / sizeof(float) / 64 + 3;
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> right("right", rows, 64);
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> left("left", rows, 64);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < 64; ++j) right(i, j) = float(i) + float(j) / 64;
  large_copy(Kokkos::DefaultHostExecutionSpace(), left, right);
  large_copy(Kokkos::DefaultHostExecutionSpace(), right, right);
  Kokkos::DefaultHostExecutionSpace().fence();
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < 64; ++j) {
      ASSERT_EQ(left(i, j), float(i) + float(j) / 64) << i << "," << j;
      ASSERT_EQ(right(i, j), float(i) + float(j) / 64) << i << "," << j;
    }
}

TEST(StreamCopy, SmallViewsTakeDeepCopy) {
  check_large_copy<float>(1000, 1, 2);
  check_large_copy<double>(1, 0, 5);
}

}  // namespace
}  // namespace meshslice
