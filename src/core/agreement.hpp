#pragma once
// Pre-flight agreement: before any collective work every rank fingerprints what must be the same
// on all of them — the resolved deck (after --set), the build (--version's facts) and every input
// file the deck names — and one all-gather compares the fingerprints. Ranks that disagree would
// otherwise train different models, or wait for each other forever in a collective one of them
// never starts; here every rank throws the same UserError naming each part that differs, the
// ranks that differ from rank 0 and, for the deck and the build, the keys that differ with their
// values on rank 0 and on the first rank that differs ("optimizer.lr: 0.003 on rank 0, 0.001 on
// rank 1"), so nobody has to diff per-rank decks by hand.
//
//     require_agreement(MPI_COMM_WORLD, inputs_to_agree_on(ctx.deck));
#include <Teuchos_ParameterList.hpp>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace meshslice {

struct AgreementPart {
  std::string name;         // "the resolved deck (after --set)", "plan.file = plan.yaml", ...
  std::uint64_t print = 0;  // its fingerprint
  // "key: value" lines (the deck's dotted keys, --version's facts) to name what differs; empty
  // for a file, whose name says it all.
  std::string facts;
};

// The parts every rank of an app must agree on: the resolved deck, the build, and the content of
// each file a string-valued deck key names (plan.file, a machine file given as a path, ...).
std::vector<AgreementPart> inputs_to_agree_on(const Teuchos::ParameterList& deck);

// The fingerprint of bytes: their CRC-32 and length. A file's: its content's, or that it is
// missing or unreadable on this rank.
std::uint64_t fingerprint(const std::string& bytes);
std::uint64_t file_fingerprint(const std::string& path);

// Collective over `comm`: UserError on every rank unless every rank has the same parts with the
// same fingerprints.
void require_agreement(MPI_Comm comm, const std::vector<AgreementPart>& parts);

}  // namespace meshslice
