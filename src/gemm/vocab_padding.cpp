#include "gemm/vocab_padding.hpp"

#include <numeric>

#include "core/errors.hpp"

namespace meshslice {

std::size_t padded_vocab(std::size_t vocab, std::size_t multiple) {
  MESHSLICE_ASSERT(multiple > 0, "padded_vocab: multiple 0");
  return (vocab + multiple - 1) / multiple * multiple;
}

std::size_t mesh_padded_vocab(std::size_t vocab, std::size_t mesh_rows, std::size_t mesh_cols) {
  return padded_vocab(vocab, kVocabGranule * std::lcm(mesh_rows, mesh_cols));
}

}  // namespace meshslice
