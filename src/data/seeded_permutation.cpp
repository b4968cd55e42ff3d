#include "data/seeded_permutation.hpp"

#include <numeric>
#include <random>
#include <utility>

namespace meshslice::data {

namespace {

// Uniform in [0, bound) without modulo bias: draws below 2^64 mod bound are redrawn, so the
// accepted range is a whole number of copies of [0, bound).
std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t rejected = (0 - bound) % bound;  // 2^64 mod bound
  std::uint64_t draw = engine();
  while (draw < rejected) draw = engine();
  return draw % bound;
}

}  // namespace

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<std::int64_t> seeded_permutation(std::int64_t count, std::uint64_t seed) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::mt19937_64 engine(seed);
  for (std::int64_t i = count - 1; i > 0; --i) {
    const std::uint64_t below = static_cast<std::uint64_t>(i) + 1;
    const auto j = static_cast<std::int64_t>(uniform_below(engine, below));
    std::swap(order[i], order[j]);
  }
  return order;
}

}  // namespace meshslice::data
