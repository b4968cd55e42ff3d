// CRC-32: known values, agreement with a bit-at-a-time reference, combining, and a speed print.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/crc32.hpp"

namespace meshslice {
namespace {

std::uint32_t crc_of(const std::string& text) { return crc32_update(0, text.data(), text.size()); }

// The definition, one bit at a time: slow, but too simple to share a mistake with the tables.
std::uint32_t reference_crc(const unsigned char* data, std::size_t bytes) {
  std::uint32_t reg = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < bytes; ++i) {
    reg ^= data[i];
    for (int bit = 0; bit < 8; ++bit) reg = (reg & 1u) ? (reg >> 1) ^ 0xEDB88320u : reg >> 1;
  }
  return reg ^ 0xFFFFFFFFu;
}

std::vector<unsigned char> random_bytes(std::size_t count, std::uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<unsigned char> bytes(count);
  for (auto& byte : bytes) byte = static_cast<unsigned char>(generator());
  return bytes;
}

TEST(Crc32, KnownValues) {
  EXPECT_EQ(crc_of("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc_of(""), 0u);
  EXPECT_EQ(crc_of("a"), 0xE8B7BE43u);
  EXPECT_EQ(crc_of("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(crc32_update(0, nullptr, 0), 0u);
}

TEST(Crc32, MatchesBitwiseReferenceAtManyLengthsAndAlignments) {
  const std::vector<unsigned char> bytes = random_bytes(5000, 1);
  // Every length up to 200 covers every tail after the 8-byte blocks of the tables (below 64
  // bytes) and after the 64- and 16-byte blocks of the folding (from 64); offsets 0..7 every
  // alignment of the loads.
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 200; ++n) lengths.push_back(n);
  for (std::size_t n : {127, 128, 129, 1000, 4093, 4992}) lengths.push_back(n);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t length : lengths) {
      const unsigned char* start = bytes.data() + offset;
      EXPECT_EQ(crc32_update(0, start, length), reference_crc(start, length))
          << "offset " << offset << ", length " << length;
    }
  }
}

TEST(Crc32, UpdateInPiecesEqualsOneCall) {
  const std::vector<unsigned char> bytes = random_bytes(1000, 2);
  const std::uint32_t whole = crc32_update(0, bytes.data(), bytes.size());
  std::uint32_t crc = 0;
  std::size_t done = 0;
  for (std::size_t piece = 1; done < bytes.size(); piece = piece * 3 % 97 + 1) {
    const std::size_t n = std::min(piece, bytes.size() - done);
    crc = crc32_update(crc, bytes.data() + done, n);
    done += n;
  }
  EXPECT_EQ(crc, whole);
}

TEST(Crc32, CombineAtEverySplitPoint) {
  const std::vector<unsigned char> bytes = random_bytes(300, 3);
  const std::uint32_t whole = crc32_update(0, bytes.data(), bytes.size());
  for (std::size_t split = 0; split <= bytes.size(); ++split) {
    const std::uint32_t a = crc32_update(0, bytes.data(), split);
    const std::uint32_t b = crc32_update(0, bytes.data() + split, bytes.size() - split);
    EXPECT_EQ(crc32_combine(a, b, bytes.size() - split), whole) << "split at " << split;
  }
}

TEST(Crc32, CombineWithEmptySecondPart) {
  EXPECT_EQ(crc32_combine(crc_of("123456789"), 0, 0), 0xCBF43926u);
  EXPECT_EQ(crc32_combine(0, crc_of("123456789"), 9), 0xCBF43926u);
  EXPECT_EQ(crc32_combine(0, 0, 0), 0u);
}

TEST(Crc32, CombineBeyondFourGibibytes) {
  // A followed by 5 GiB of zeros two ways: chained updates over every byte, and combining
  // the CRC of a zero block with itself by doubling, which never touches the 5 GiB.
  const std::vector<unsigned char> a = random_bytes(1001, 4);
  const std::vector<unsigned char> zeros(std::size_t{1} << 20, 0);
  const std::uint64_t mebibyte = zeros.size();
  const std::uint64_t five_gibibytes = 5 * 1024 * mebibyte;

  std::uint32_t chained = crc32_update(0, a.data(), a.size());
  for (std::uint64_t done = 0; done < five_gibibytes; done += mebibyte)
    chained = crc32_update(chained, zeros.data(), zeros.size());

  std::uint32_t zeros_crc = crc32_update(0, zeros.data(), zeros.size());  // 1 MiB
  std::uint64_t zeros_bytes = mebibyte;
  std::uint32_t one_gibibyte_crc = 0;
  while (zeros_bytes < 4 * 1024 * mebibyte) {
    zeros_crc = crc32_combine(zeros_crc, zeros_crc, zeros_bytes);
    zeros_bytes *= 2;
    if (zeros_bytes == 1024 * mebibyte) one_gibibyte_crc = zeros_crc;
  }
  zeros_crc = crc32_combine(zeros_crc, one_gibibyte_crc, 1024 * mebibyte);  // 4 + 1 GiB
  zeros_bytes += 1024 * mebibyte;
  ASSERT_EQ(zeros_bytes, five_gibibytes);

  const std::uint32_t a_crc = crc32_update(0, a.data(), a.size());
  EXPECT_EQ(crc32_combine(a_crc, zeros_crc, five_gibibytes), chained);
}

TEST(Crc32, PrintsThroughput) {
  const std::vector<unsigned char> bytes = random_bytes(std::size_t{64} << 20, 5);
  std::uint32_t crc = crc32_update(0, bytes.data(), bytes.size());  // warm the caches and pages
  const int repeats = 4;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) crc = crc32_update(crc, bytes.data(), bytes.size());
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  const double gigabytes = repeats * static_cast<double>(bytes.size()) / 1e9;
  std::printf("crc32_update: %.2f GB/s over a 64 MiB buffer (crc %08x)\n",
              gigabytes / seconds.count(), static_cast<unsigned>(crc));
}

}  // namespace
}  // namespace meshslice
