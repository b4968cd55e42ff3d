#pragma once
// One safetensors file (checkpoint/safetensors.hpp) written or read by every rank of a
// communicator at once with MPI-IO: each rank moves the runs of each tensor it holds
// (checkpoint/shard_runs.hpp) through a file view of exactly those runs, one collective call per
// tensor, so no rank ever holds a whole tensor and the MPI library can merge the ranks' pieces
// into large requests. The calls are collective: every rank makes the same sequence, with no
// runs where it has nothing of a tensor.
//
// Integrity: the ranks that own a piece of the file (each byte has exactly one owner) take the
// CRC-32 of what they write or read, and finish() combines them on rank 0 into the whole
// file's CRC without rereading it. Any rank's I/O failure ends in one error on every rank.
//
//     TensorFileWriter out(comm, path, layout);
//     out.write(i, runs, staged.data(), /*owned=*/true);   // per tensor, on every rank
//     std::uint32_t crc = out.finish();                    // every rank: the file's CRC-32
//
//     TensorFileReader in(comm, path);                     // header checked on every rank
//     in.read(i, runs, staged.data(), owned);
//     std::uint32_t crc = in.finish();
#include <mpi.h>

#include <cstdint>
#include <string>
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
  // Collective: the file view of tensor i's runs (element size `bytes`).
  void view(std::size_t tensor, const std::vector<ShardRun>& runs);
  // Records the CRC of `bytes` bytes at file offset `offset` (this rank owns them).
  void own(std::uint64_t offset, const void* data, std::uint64_t bytes);
  // Records the CRCs of tensor i's runs in `staged`.
  void own_runs(std::size_t tensor, const std::vector<ShardRun>& runs, const void* staged);
  // Notes a failed MPI call (the first one's message is kept) and whether it failed.
  bool failed(int status, const char* what);
  // UserError on every rank when any rank has failed so far (collective).
  void agree(const char* what);

  MPI_Comm comm_;
  std::string path_;
  SafetensorsLayout layout_;
  MPI_File file_ = MPI_FILE_NULL;
  MPI_Datatype element_ = MPI_DATATYPE_NULL;
  bool writing_ = false;
  std::string error_;  // this rank's first failure
  struct Piece {
    std::uint64_t offset, bytes, crc;
  };
  std::vector<Piece> pieces_;  // this rank's owned bytes and their CRCs
};

class TensorFileWriter : public TensorFile {
 public:
  // Collective: creates (truncates) the file and writes its header from rank 0.
  TensorFileWriter(MPI_Comm comm, const std::string& path, const SafetensorsLayout& layout);
  // Collective: this rank's runs of tensor i from `staged` (file dtype, in the runs' order).
  void write(std::size_t tensor, const std::vector<ShardRun>& runs, const void* staged,
             bool owned);
};

class TensorFileReader : public TensorFile {
 public:
  // Collective: opens the file, rank 0 reads its header, every rank checks the same header.
  // UserError on every rank for a missing or unreadable file or an invalid header.
  TensorFileReader(MPI_Comm comm, const std::string& path);
  // Collective: this rank's runs of tensor i into `staged` (file dtype, in the runs' order).
  void read(std::size_t tensor, const std::vector<ShardRun>& runs, void* staged, bool owned);
};

}  // namespace meshslice
