#pragma once
// The serial reference of a language model's two ends (model/vocab_parallel.hpp distributes
// them): the token embedding and the cross-entropy of the logits against the next tokens. Whole
// tensors in std::vector and plain loops in double, as the rest of the serial reference
// (model/reference_model.hpp): nothing shared with the distributed code but the formulas.
//
// Tables are row-major V x H, activations tokens x H, logits tokens x V (the real vocabulary:
// the reference has no padding).
#include <cstddef>
#include <vector>

namespace meshslice {

// x (tokens x H): row t is row ids[t] of the table.
std::vector<double> reference_embedding(const std::vector<double>& table, std::size_t hidden,
                                        const std::vector<int>& ids);

// dtable (V x H) += the rows of dx (tokens x H) added into the rows of their ids.
void reference_embedding_gradient(const std::vector<double>& dx, std::size_t hidden,
                                  const std::vector<int>& ids, std::vector<double>& dtable);

// The sum over tokens of -log softmax(logits[t])[targets[t]] (logits: tokens x vocab); the
// gradient of scale times that sum into dlogits (tokens x vocab).
double reference_cross_entropy(const std::vector<double>& logits, std::size_t vocab,
                               const std::vector<int>& targets, double scale,
                               std::vector<double>& dlogits);

}  // namespace meshslice
