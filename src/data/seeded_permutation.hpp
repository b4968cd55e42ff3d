#pragma once
// Seeded shuffles that come out the same on every rank, run, compiler and standard library:
// std::mt19937_64's output is fixed by the standard, but std::shuffle and
// std::uniform_int_distribution are not (libstdc++ and libc++ draw differently), so the
// Fisher-Yates shuffle and the unbiased draw below are written out.
#include <cstdint>
#include <vector>

namespace meshslice::data {

// A seed for the stream `stream` of `seed` (an epoch, a split): distinct streams of one seed
// give unrelated shuffles (SplitMix64's finalizer).
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream);

// 0..count-1 in the order of a Fisher-Yates shuffle driven by std::mt19937_64(seed).
std::vector<std::int64_t> seeded_permutation(std::int64_t count, std::uint64_t seed);

}  // namespace meshslice::data
