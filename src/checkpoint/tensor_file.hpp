#pragma once
// One safetensors file (checkpoint/safetensors.hpp) written or read by every rank of a
// communicator at once with MPI-IO, in two phases per tensor: the tensor's bytes in the file are
// cut into one contiguous domain per rank; the ranks exchange the pieces of their runs
// (checkpoint/shard_runs.hpp) with the domains' ranks (MPI_Alltoallv), and each rank writes or
// reads its domain with one contiguous collective call. No rank ever holds a whole tensor (a
// domain is 1/P of it), and the file system sees P large requests instead of one per run: handing
// MPI-IO a file view of the runs themselves made Open MPI issue one write per run here (30 000
// writes for a 300 MB checkpoint on 2 ranks, 8x slower than one process writing the file).
// The calls are collective: every rank makes the same sequence, with no runs where it has
// nothing of a tensor.
//
// Integrity: each rank takes the CRC-32 of the domains it writes or reads, and finish() combines
// them on rank 0 into the whole file's CRC without rereading it; a write also checks that the
// writers' runs tile every domain exactly. Any rank's I/O failure ends in one error on every rank.
//
//     TensorFileWriter out(comm, path, layout);
//     out.write(i, runs, staged.data());   // per tensor, on every rank (runs: what it writes)
//     std::uint32_t crc = out.finish();    // every rank: the file's CRC-32
//
//     TensorFileReader in(comm, path);     // header checked on every rank
//     in.read(i, runs, staged.data());     // runs: what it needs (ranks may need the same)
//     std::uint32_t crc = in.finish();
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/safetensors.hpp"
#include "checkpoint/shard_runs.hpp"

namespace meshslice {

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
  TensorFile(MPI_Comm comm, std::string path);
  ~TensorFile();
  // Tensor i's elements [first, last) this rank writes or reads: its domain.
  std::pair<std::uint64_t, std::uint64_t> domain(std::size_t tensor, int rank) const;
  // The runs cut at the domains' edges, per domain (rank), and where each rank's share of a
  // buffer in the runs' order starts (elements).
  struct Exchange {
    std::vector<std::vector<std::uint64_t>> pieces;  // per rank: offset, length, offset, ...
    std::vector<int> counts, starts;                 // per rank, elements
  };
  Exchange cut(std::size_t tensor, const std::vector<ShardRun>& runs) const;
  // Sends each rank the (offset, length) list of `out`, returns what every rank sent here.
  std::vector<std::vector<std::uint64_t>> swap_pieces(const Exchange& out) const;
  // Records the CRC of `bytes` bytes at file offset `offset` (this rank owns them).
  void own(std::uint64_t offset, const void* data, std::uint64_t bytes);
  // Notes a failed MPI call (the first one's message is kept) and whether it failed.
  bool failed(int status, const char* what);
  // UserError on every rank when any rank has failed so far (collective).
  void agree(const char* what);

  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
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
  // This rank's domain of the current tensor, and the pieces exchanged for it: kept from tensor
  // to tensor (fresh buffers of this size cost as much in page faults as the writing itself).
  std::vector<char> domain_, exchanged_;
};

class TensorFileWriter : public TensorFile {
 public:
  // Collective: creates (truncates) the file and writes its header from rank 0.
  TensorFileWriter(MPI_Comm comm, const std::string& path, const SafetensorsLayout& layout);
  // Collective: this rank's runs of tensor i from `staged` (file dtype, in the runs' order). The
  // writers' runs must cover the tensor once: each element has one writer.
  void write(std::size_t tensor, const std::vector<ShardRun>& runs, const void* staged);
};

class TensorFileReader : public TensorFile {
 public:
  // Collective: opens the file, rank 0 reads its header, every rank checks the same header.
  // UserError on every rank for a missing or unreadable file or an invalid header.
  TensorFileReader(MPI_Comm comm, const std::string& path);
  // Collective: this rank's runs of tensor i into `staged` (file dtype, in the runs' order).
  void read(std::size_t tensor, const std::vector<ShardRun>& runs, void* staged);
};

}  // namespace meshslice
