#pragma once
// CRC-32 as zlib, PNG and Python's zlib.crc32 compute it (reflected, polynomial 0xEDB88320,
// initial value and final xor 0xFFFFFFFF), to check that a checkpoint read back is the one
// written. crc32_update folds with carry-less multiplication where the CPU has it (x86-64
// PCLMULQDQ), and is table driven (slicing by 8) elsewhere, because it runs over whole checkpoints;
// crc32_combine lets ranks that each wrote a byte range of one file join their CRCs into the
// file's without any rank reading the file again.
//
//     std::uint32_t crc = 0;
//     crc = crc32_update(crc, header.data(), header.size());
//     crc = crc32_update(crc, tensor_bytes, tensor_size);       // same as one call over both
//
//     // rank 0 wrote bytes [0, n0), rank 1 the n1 bytes after them:
//     std::uint32_t file_crc = crc32_combine(crc_rank0, crc_rank1, n1);
#include <cstddef>
#include <cstdint>
#include <string>

namespace meshslice {

// The CRC of the bytes seen so far (`crc`, 0 before any) followed by `bytes` bytes at `data`:
// crc32_update(crc32_update(0, a, na), b, nb) is the CRC of a followed by b.
std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t bytes);

// The CRC of A followed by B from crc(A), crc(B) and B's length alone (any length, also 0 and
// beyond 4 GiB). Costs a few dozen 32-bit multiplications, not a pass over B.
std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b);

// "0a1b2c3d": a CRC as checkpoints record it.
std::string crc32_hex(std::uint32_t crc);

}  // namespace meshslice
