#pragma once
// How a language model picks its next token: greedily (temperature 0), or a draw from
// softmax(logits / temperature). The draw is the Gumbel-max trick: the token whose
// logit / temperature + Gumbel noise is largest is distributed as that softmax, and the noise of
// token `id` in draw `draw` is a pure function of (seed, draw, id). So each chip scores only the
// vocabulary it holds, the chips agree by a max as for greedy decoding, and the token drawn does
// not depend on the mesh (the serial reference draws the same).
#include <cstdint>

#include "core/kokkos_compat.hpp"
#include "model/counter_random.hpp"

namespace meshslice {

struct TokenSampling {
  double temperature = 0;  // 0: greedy
  std::uint64_t seed = 0;
};

// The score whose largest value over the vocabulary picks draw `draw`'s token.
KOKKOS_INLINE_FUNCTION double token_score(const TokenSampling& sampling, std::uint64_t draw,
                                          std::uint64_t id, double logit) {
  if (sampling.temperature <= 0) return logit;
  const double u = counter_uniform(mix64(sampling.seed ^ mix64(draw ^ mix64(id))));
  return logit / sampling.temperature - kmath::log(-kmath::log(u));
}

}  // namespace meshslice
