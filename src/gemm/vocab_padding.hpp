#pragma once
// The vocabulary a language model's tables and logits are padded to on a mesh (Megatron's
// make-vocab-size-divisible-by, on two axes): the one rule that meshslice-train's embedding and
// head (model/vocab_parallel.hpp) and meshslice-tune's planner (the head's GEMMs) size by.
#include <cstddef>

namespace meshslice {

// The padding's granule: the vocabulary is padded to a multiple of this many times both mesh
// extents' least common multiple, so that the head's GEMMs can slice the padded vocabulary.
constexpr std::size_t kVocabGranule = 8;

// `vocab` rounded up to a multiple of `multiple` (> 0).
std::size_t padded_vocab(std::size_t vocab, std::size_t multiple);

// `vocab` padded for a mesh of `mesh_rows` x `mesh_cols`.
std::size_t mesh_padded_vocab(std::size_t vocab, std::size_t mesh_rows, std::size_t mesh_cols);

}  // namespace meshslice
