#pragma once
// Which documents are held out for evaluation. The split is by document, never inside one, so no
// text the model trains on is scored as unseen: round(fraction x documents) documents, taken
// from a seeded shuffle of the document ids (at least one for each side when there are two or
// more documents and the fraction is above 0). The same (documents, fraction, seed) gives the same
// split everywhere: meshslice-data prints the split a trainer with that fraction and seed uses.
#include <cstdint>
#include <vector>

namespace meshslice::data {

struct DocumentSplit {
  std::vector<std::int64_t> train, held_out;  // document ids, ascending
};

// A UserError unless 0 <= fraction < 1 (`what` names the setting in the message).
void check_held_out_fraction(double fraction, const char* what);

DocumentSplit split_documents(std::int64_t documents, double held_out_fraction, std::uint64_t seed);

}  // namespace meshslice::data
