#pragma once
// One safetensors file (checkpoint/safetensors.hpp) written or read by every rank of a
// communicator at once with MPI-IO, in two phases: each tensor's elements are cut into one
// contiguous domain per rank, which the rank writes or reads from start to end, a chunk per
// round, with calls of its own; in each round the ranks exchange the pieces of their runs
// (checkpoint/shard_runs.hpp) that fall in that round's chunks with the chunks' ranks
// (MPI_Alltoallw, the pieces described by MPI datatypes, so nothing is packed by hand). The file
// system sees P sequential streams of large requests instead of one request per run: handing
// MPI-IO a file view of the runs themselves made Open MPI issue one write per run here (30 000
// writes for a 300 MB checkpoint on 2 ranks, 8x slower than one process writing the file). The
// rounds bound what a rank holds beside its shard to one round's staging buffer (its runs in the
// round, in file order) and its chunk, a few MiB whatever the model's size, as ROMIO's
// collective buffer does.
// The calls are collective: every rank makes the same sequence, with no runs where it has
// nothing of a tensor.
//
// Integrity: each rank takes the CRC-32 of the domains it writes or reads, and finish() combines
// them on rank 0 into the whole file's CRC without rereading it; a write also checks that the
// writers' runs tile every domain exactly. Any rank's I/O failure ends in one error on every rank.
//
//     TensorFileWriter out(comm, path, layout);
//     out.write(i, runs, [&](const std::vector<ShardRun>& part, void* to) {
//       stage(part, shard, static_cast<float*>(to));  // the runs, cut to a round, in file order
//     });                                             // per tensor, on every rank
//     std::uint32_t crc = out.finish();               // every rank: the file's CRC-32
//
//     TensorFileReader in(comm, path);                // header checked on every rank
//     in.read(i, runs, [&](const std::vector<ShardRun>& part, const void* from) {
//       unstage(part, static_cast<const float*>(from), shard);  // ranks may need the same runs
//     });
//     std::uint32_t crc = in.finish();
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/safetensors.hpp"
#include "checkpoint/shard_runs.hpp"

namespace meshslice {

// A rank's chunk of its domain in one round: large enough for the file system to stream, small
// enough to stay in cache between the exchange and the I/O.
constexpr std::uint64_t kRoundBytesPerRank = std::uint64_t{2} << 20;
// A round's bound over all ranks (smaller chunks on many ranks), which is also that of a rank's
// staging buffer when it holds all of a round.
constexpr std::uint64_t kMaxRoundBytes = std::uint64_t{64} << 20;

// Moves the elements of `part` (some of a rank's runs, cut to a round) between its shard and a
// buffer in file order and dtype.
using StageRuns = std::function<void(const std::vector<ShardRun>& part, void* to)>;
using UnstageRuns = std::function<void(const std::vector<ShardRun>& part, const void* from)>;

class TensorFile {
 public:
  TensorFile(const TensorFile&) = delete;
  TensorFile& operator=(const TensorFile&) = delete;
  const SafetensorsLayout& layout() const { return layout_; }
  const std::string& path() const { return path_; }
  // Collective: closes the file. UserError on every rank when any rank's I/O failed (naming the
  // file, the rank and the system's reason); otherwise the file's CRC-32 on every rank.
  std::uint32_t finish();

 protected:
  // round_bytes_per_rank: kRoundBytesPerRank but in tests, which make rounds of a few elements.
  TensorFile(MPI_Comm comm, std::string path, std::uint64_t round_bytes_per_rank);
  ~TensorFile();
  // One round of a tensor: each rank's chunk [first, last) of its domain (elements).
  struct Round {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks;  // per rank, ascending
  };
  // Tensor i's rounds, the same on every rank.
  std::vector<Round> rounds(std::size_t tensor) const;
  // The runs' parts in a round's chunks, per chunk (rank), and where each rank's share of the
  // staging buffer (this rank's parts in the runs' order, `part`) starts (elements).
  struct Exchange {
    std::vector<std::vector<std::uint64_t>> pieces;  // per rank: offset, length, offset, ...
    std::vector<int> counts, starts;                 // per rank, elements
  };
  Exchange cut(const Round& round, const std::vector<ShardRun>& runs,
               std::vector<ShardRun>& part) const;
  // Sends each rank the (offset, length) list of `out`, returns what every rank sent here.
  std::vector<std::vector<std::uint64_t>> swap_pieces(const Exchange& out) const;
  // Moves the round's pieces between each rank's staging buffer (in the runs' order, `mine`)
  // and the chunks (each rank's pieces of this rank's in `theirs`): to the chunks when writing.
  void exchange(const Round& round, const Exchange& mine,
                const std::vector<std::vector<std::uint64_t>>& theirs, bool to_chunks);
  // Records the CRC of `bytes` bytes at file offset `offset` (this rank owns them).
  void own(std::uint64_t offset, const void* data, std::uint64_t bytes);
  // Notes a failed MPI call (the first one's message is kept) and whether it failed.
  bool failed(int status, const char* what);
  // UserError on every rank when any rank has failed so far (collective).
  void agree(const char* what);

  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  std::uint64_t round_bytes_per_rank_;
  std::string path_;
  SafetensorsLayout layout_;
  MPI_File file_ = MPI_FILE_NULL;
  MPI_Datatype element_ = MPI_DATATYPE_NULL;
  bool writing_ = false;
  std::string error_;  // this rank's first failure
  struct Piece {
    std::uint64_t offset, bytes, crc;
  };
  std::vector<Piece> pieces_;  // this rank's domains and their CRCs
  // This rank's chunk in the current round, and its runs in the round in file order: kept from
  // round to round (fresh buffers cost as much in page faults as the writing itself).
  std::vector<char> chunk_, staged_;
};

class TensorFileWriter : public TensorFile {
 public:
  // Collective: creates (truncates) the file and writes its header from rank 0.
  TensorFileWriter(MPI_Comm comm, const std::string& path, const SafetensorsLayout& layout,
                   std::uint64_t round_bytes_per_rank = kRoundBytesPerRank);
  // Collective: this rank's runs of tensor i (sorted by offset), whose elements `stage` gives.
  // The writers' runs must cover the tensor once: each element has one writer.
  void write(std::size_t tensor, const std::vector<ShardRun>& runs, const StageRuns& stage);
};

class TensorFileReader : public TensorFile {
 public:
  // Collective: opens the file, rank 0 reads its header, every rank checks the same header.
  // UserError on every rank for a missing or unreadable file or an invalid header.
  TensorFileReader(MPI_Comm comm, const std::string& path,
                   std::uint64_t round_bytes_per_rank = kRoundBytesPerRank);
  // Collective: this rank's runs of tensor i (sorted by offset), handed to `unstage`.
  void read(std::size_t tensor, const std::vector<ShardRun>& runs, const UnstageRuns& unstage);
};

}  // namespace meshslice
