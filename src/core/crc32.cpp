// CRC-32 (see core/crc32.hpp).
//
// The math, which both functions rest on. Read a byte string as a polynomial over GF(2), the
// first bit the highest power; here "reflected" order is used: in a 32-bit word, bit 31 holds
// the coefficient of x^0 and bit 0 that of x^31, and the first bit of each byte is its lowest.
// With P the CRC polynomial, F = x^31 + ... + 1 (all ones) and |M| a message's length in bits,
//     crc(M) = F + (F x^|M| + M x^32) mod P.
// Writing it out for A followed by B, (A B) = A x^|B| + B, gives
//     crc(A B) = crc(A) x^|B| + crc(B)   (mod P),
// the F terms cancelling in pairs. So combining needs only crc(A) times x^(8 bytes_b) mod P, and
// x^(8 n) is a product of the powers x^(8 * 2^k) for the bits k set in n.
#include "core/crc32.hpp"

#include <array>
#include <cstdio>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MESHSLICE_CRC32_FOLD 1
#endif

namespace meshslice {

namespace {

// P without its x^32 term, in reflected order.
constexpr std::uint32_t kPolynomial = 0xEDB88320u;
// x^0 in reflected order.
constexpr std::uint32_t kOne = 0x80000000u;

// b times x, mod P: every coefficient moves one power up (one bit right); a coefficient that
// reaches x^32 is replaced by P's lower terms.
constexpr std::uint32_t times_x(std::uint32_t b) {
  return (b >> 1) ^ ((b & 1u) ? kPolynomial : 0u);
}

// a times b mod P, by adding b x^i for every power x^i present in a.
constexpr std::uint32_t multiply_mod_p(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (std::uint32_t bit = kOne; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = times_x(b);
  }
  return product;
}

// tables[0][v]: the register after feeding one byte v into a zero register (the classic
// byte-at-a-time table). tables[k][v]: the same byte followed by k zero bytes. Slicing by 8
// looks up the 8 bytes of a word in tables[7] .. tables[0] at once and xors the results,
// because the CRC is linear: a word's effect is the sum of its bytes' effects.
struct Tables {
  std::uint32_t entries[8][256];
};

constexpr Tables make_tables() {
  Tables tables{};
  for (std::uint32_t v = 0; v < 256; ++v) {
    std::uint32_t reg = v;
    for (int bit = 0; bit < 8; ++bit) reg = times_x(reg);
    tables.entries[0][v] = reg;
  }
  for (int k = 1; k < 8; ++k) {
    for (int v = 0; v < 256; ++v) {
      const std::uint32_t previous = tables.entries[k - 1][v];
      tables.entries[k][v] = (previous >> 8) ^ tables.entries[0][previous & 0xFFu];
    }
  }
  return tables;
}

// x^(8 * 2^k) mod P for k = 0..63: the shift by a 2^k-byte run of zeros. Each is the square
// of the one before.
constexpr std::array<std::uint32_t, 64> make_zero_run_powers() {
  std::array<std::uint32_t, 64> powers{};
  std::uint32_t power = kOne >> 8;  // x^8
  for (std::size_t k = 0; k < powers.size(); ++k) {
    powers[k] = power;
    power = multiply_mod_p(power, power);
  }
  return powers;
}

// Built by the compiler: no initialization at run time, nothing for threads to race on.
constexpr Tables kTables = make_tables();
constexpr std::array<std::uint32_t, 64> kZeroRunPowers = make_zero_run_powers();

// Little-endian load assembled from bytes: correct on any host, a single load on x86.
inline std::uint32_t load_le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// The register after `bytes` more bytes, slicing by 8 (the register, not the CRC: no xors).
std::uint32_t table_update(std::uint32_t reg, const unsigned char* p, std::size_t bytes) {
  const auto& t = kTables.entries;
  while (bytes >= 8) {
    const std::uint32_t low = load_le32(p) ^ reg;
    const std::uint32_t high = load_le32(p + 4);
    reg = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^
          t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^
          t[0][high >> 24];
    p += 8;
    bytes -= 8;
  }
  for (; bytes > 0; --bytes, ++p) reg = (reg >> 8) ^ t[0][(reg ^ *p) & 0xFF];
  return reg;
}

#ifdef MESHSLICE_CRC32_FOLD
// Folding with carry-less multiplication (PCLMULQDQ), about 8x the tables. The register is
// xored into the message's first 4 bytes; then the message is a polynomial M, and the register
// at its end is M x^32 mod P. Four 16-byte lanes run through it 64 bytes apart: a lane X
// (two 64-bit halves, X = lo x^64 + hi in reflected order) moves D bits further by
// X x^D = lo x^(D+64) + hi x^D, with each power of x replaced by its remainder mod P, and is
// added to the data there. Only the congruence mod P matters, so the lanes are finally folded
// into one 16-byte value, and the register of those 16 bytes followed by the message's tail
// (fewer than 16 bytes) comes from the tables, not from a Barrett reduction.

// x^n mod P in the register's order.
constexpr std::uint32_t x_to_the(std::uint32_t n) {
  std::uint32_t power = kOne;
  for (; n > 0; --n) power = times_x(power);
  return power;
}

// The multiplier that moves a half by x^n: a carry-less product of two reflected 64-bit halves
// comes out one power short (the product of x^63-indexed halves is x^126-indexed), so the
// constant is x^(n-1) mod P, placed in the high 32 bits of its half.
constexpr std::uint64_t fold_constant(std::uint32_t n) {
  return static_cast<std::uint64_t>(x_to_the(n - 1)) << 32;
}

constexpr std::uint64_t kFold512Low = fold_constant(512 + 64), kFold512High = fold_constant(512);
constexpr std::uint64_t kFold128Low = fold_constant(128 + 64), kFold128High = fold_constant(128);

__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i x, __m128i constants,
                                                           __m128i data) {
  const __m128i low = _mm_clmulepi64_si128(x, constants, 0x00);   // lo x its constant
  const __m128i high = _mm_clmulepi64_si128(x, constants, 0x11);  // hi x its constant
  return _mm_xor_si128(_mm_xor_si128(low, high), data);
}

__attribute__((target("pclmul,sse2"))) std::uint32_t folded_update(std::uint32_t reg,
                                                                   const unsigned char* p,
                                                                   std::size_t bytes) {
  const auto load = [](const unsigned char* at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  };
  __m128i lane[4] = {load(p), load(p + 16), load(p + 32), load(p + 48)};
  lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi32_si128(static_cast<int>(reg)));
  p += 64;
  bytes -= 64;
  const __m128i by512 =
      _mm_set_epi64x(static_cast<long long>(kFold512High), static_cast<long long>(kFold512Low));
  for (; bytes >= 64; p += 64, bytes -= 64)
    for (int i = 0; i < 4; ++i) lane[i] = fold(lane[i], by512, load(p + 16 * i));
  const __m128i by128 =
      _mm_set_epi64x(static_cast<long long>(kFold128High), static_cast<long long>(kFold128Low));
  __m128i x = lane[0];
  for (int i = 1; i < 4; ++i) x = fold(x, by128, lane[i]);
  for (; bytes >= 16; p += 16, bytes -= 16) x = fold(x, by128, load(p));
  unsigned char folded[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(folded), x);
  return table_update(table_update(0, folded, 16), p, bytes);
}

bool can_fold() {
  static const bool supported = __builtin_cpu_supports("pclmul");
  return supported;
}
#endif

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::uint32_t reg = ~crc;  // undo the final xor of the CRC so far
#ifdef MESHSLICE_CRC32_FOLD
  if (bytes >= 64 && can_fold()) return ~folded_update(reg, p, bytes);
#endif
  return ~table_update(reg, p, bytes);
}

std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b) {
  // crc(A) x^(8 bytes_b): one multiplication per bit set in bytes_b.
  std::uint32_t shifted = crc_a;
  for (std::size_t k = 0; bytes_b != 0; ++k, bytes_b >>= 1)
    if (bytes_b & 1u) shifted = multiply_mod_p(shifted, kZeroRunPowers[k]);
  return shifted ^ crc_b;
}

std::string crc32_hex(std::uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", crc);
  return text;
}

}  // namespace meshslice
