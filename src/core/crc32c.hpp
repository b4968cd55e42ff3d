#pragma once
// CRC-32C (Castagnoli: reflected, polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF),
// the checksum of TFRecord framing, so TensorBoard's reader accepts the event files that
// core/tensorboard_events.hpp writes. Byte-at-a-time from one table: event records are a few
// hundred bytes, and the fast paths of core/crc32.hpp are for CRC-32's other polynomial.
//
//     std::uint32_t crc = 0;
//     crc = crc32c_update(crc, header, 8);
//     crc = crc32c_update(crc, data, size);          // same as one call over both
//     std::uint32_t stored = crc32c_masked(crc);     // what a TFRecord holds
#include <cstddef>
#include <cstdint>

namespace meshslice {

// The CRC-32C of the bytes seen so far (`crc`, 0 before any) followed by `bytes` bytes at `data`:
// crc32c_update(crc32c_update(0, a, na), b, nb) is the CRC-32C of a followed by b.
std::uint32_t crc32c_update(std::uint32_t crc, const void* data, std::size_t bytes);

// TFRecord stores a CRC rotated and offset, so that the CRC of data that itself holds CRCs is
// not degenerate: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
std::uint32_t crc32c_masked(std::uint32_t crc);

}  // namespace meshslice
