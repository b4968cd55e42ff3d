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

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t bytes) {
  const auto& t = kTables.entries;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t reg = ~crc;  // undo the final xor of the CRC so far
  while (bytes >= 8) {
    const std::uint32_t low = load_le32(p) ^ reg;
    const std::uint32_t high = load_le32(p + 4);
    reg = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^
          t[4][low >> 24] ^ t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^
          t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
    p += 8;
    bytes -= 8;
  }
  for (; bytes > 0; --bytes, ++p) reg = (reg >> 8) ^ t[0][(reg ^ *p) & 0xFF];
  return ~reg;
}

std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b) {
  // crc(A) x^(8 bytes_b): one multiplication per bit set in bytes_b.
  std::uint32_t shifted = crc_a;
  for (std::size_t k = 0; bytes_b != 0; ++k, bytes_b >>= 1)
    if (bytes_b & 1u) shifted = multiply_mod_p(shifted, kZeroRunPowers[k]);
  return shifted ^ crc_b;
}

}  // namespace meshslice
