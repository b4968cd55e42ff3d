#include "checkpoint/tensor_file.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

#include "core/broadcast_text.hpp"
#include "core/crc32.hpp"
#include "core/errors.hpp"

namespace meshslice {
namespace {

std::string mpi_reason(int status) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

// The file's scalar for a dtype. MPI has no bf16: its elements travel and are written as the
// 16-bit integers they are laid out as (nothing here reduces them).
MPI_Datatype mpi_element(const std::string& dtype) {
  if (dtype == "BF16") return MPI_UINT16_T;
  return dtype == "F64" ? MPI_DOUBLE : MPI_FLOAT;
}

// The header's dtype for every tensor of one file (a checkpoint file holds one precision).
MPI_Datatype file_element(const SafetensorsLayout& layout) {
  const std::string dtype = layout.tensors.empty() ? "F32" : layout.tensors.front().dtype;
  for (const SafetensorsTensor& t : layout.tensors)
    if (t.dtype != dtype)
      throw std::runtime_error(concat("tensor ", t.name, " is ", t.dtype, " and ",
                                      layout.tensors.front().name, " is ", dtype,
                                      ": meshslice reads files of one dtype"));
  return mpi_element(dtype);
}

}  // namespace

TensorFile::TensorFile(MPI_Comm comm, std::string path, std::uint64_t round_bytes_per_rank)
    : comm_(comm), round_bytes_per_rank_(round_bytes_per_rank), path_(std::move(path)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
}

TensorFile::~TensorFile() {
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);  // only after an error: finish() closes
}

bool TensorFile::failed(int status, const char* what) {
  if (status == MPI_SUCCESS) return false;
  if (error_.empty()) error_ = concat(what, ": ", mpi_reason(status));
  return true;
}

void TensorFile::agree(const char* what) {
  // The lowest failing rank's message, on every rank.
  int first = error_.empty() ? INT_MAX : rank_;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm_);
  if (first == INT_MAX) return;
  const std::string message = broadcast_text(comm_, error_, first);
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  throw UserError(concat(what, " ", path_, " failed on rank ", first, ": ", message));
}

std::vector<TensorFile::Round> TensorFile::rounds(std::size_t tensor) const {
  const SafetensorsTensor& t = layout_.tensors.at(tensor);
  const auto p = static_cast<std::uint64_t>(ranks_), n = t.elements();
  const std::uint64_t chunk_bytes = std::min(round_bytes_per_rank_, kMaxRoundBytes / p);
  const std::uint64_t chunk = std::max<std::uint64_t>(1, chunk_bytes / dtype_bytes(t.dtype));
  const std::uint64_t longest = (n + p - 1) / p;  // the largest domain
  std::vector<Round> out;
  for (std::uint64_t at = 0; at < longest; at += chunk) {
    Round round;
    for (std::uint64_t r = 0; r < p; ++r) {
      const std::uint64_t first = n * r / p, last = n * (r + 1) / p;  // rank r's domain
      round.chunks.emplace_back(std::min(last, first + at), std::min(last, first + at + chunk));
    }
    out.push_back(std::move(round));
  }
  return out;
}

TensorFile::Exchange TensorFile::cut(const Round& round, const std::vector<ShardRun>& runs,
                                     std::vector<ShardRun>& part) const {
  Exchange out;
  out.pieces.resize(static_cast<std::size_t>(ranks_));
  out.counts.assign(out.pieces.size(), 0);
  out.starts.assign(out.pieces.size(), 0);
  part.clear();
  int at = 0;  // elements of the staging buffer so far
  for (std::size_t r = 0; r < out.pieces.size(); ++r) {
    out.starts[r] = at;
    for (const ShardRun& run : runs_within(runs, round.chunks[r].first, round.chunks[r].second)) {
      out.pieces[r].insert(out.pieces[r].end(), {run.offset, run.length});
      out.counts[r] += static_cast<int>(run.length);
      part.push_back(run);
    }
    at += out.counts[r];
  }
  return out;
}

std::vector<std::vector<std::uint64_t>> TensorFile::swap_pieces(const Exchange& out) const {
  const std::size_t p = out.pieces.size();
  std::vector<int> send_counts(p), send_starts(p), recv_counts(p), recv_starts(p);
  std::vector<std::uint64_t> sent;
  for (std::size_t r = 0; r < p; ++r) {
    send_counts[r] = static_cast<int>(out.pieces[r].size());
    send_starts[r] = static_cast<int>(sent.size());
    sent.insert(sent.end(), out.pieces[r].begin(), out.pieces[r].end());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
  for (std::size_t r = 1; r < p; ++r) recv_starts[r] = recv_starts[r - 1] + recv_counts[r - 1];
  std::vector<std::uint64_t> received(
      static_cast<std::size_t>(recv_starts[p - 1] + recv_counts[p - 1]));
  MPI_Alltoallv(sent.data(), send_counts.data(), send_starts.data(), MPI_UINT64_T, received.data(),
                recv_counts.data(), recv_starts.data(), MPI_UINT64_T, comm_);
  std::vector<std::vector<std::uint64_t>> by_rank(p);
  for (std::size_t r = 0; r < p; ++r)
    by_rank[r].assign(received.begin() + recv_starts[r],
                      received.begin() + recv_starts[r] + recv_counts[r]);
  return by_rank;
}

void TensorFile::exchange(const Round& round, const Exchange& mine,
                          const std::vector<std::vector<std::uint64_t>>& theirs, bool to_chunks) {
  const std::size_t p = theirs.size();
  int size = 0;
  MPI_Type_size(element_, &size);
  // The staging side: each rank's share is consecutive.
  std::vector<int> staged_displacements(p);
  for (std::size_t r = 0; r < p; ++r) staged_displacements[r] = mine.starts[r] * size;
  const std::vector<MPI_Datatype> elements(p, element_);
  // The chunk side: each rank's pieces, wherever they fall in the chunk.
  const std::uint64_t first = round.chunks[static_cast<std::size_t>(rank_)].first;
  std::vector<int> chunk_counts(p, 0), chunk_displacements(p, 0);
  std::vector<MPI_Datatype> chunk_types(p, element_);
  for (std::size_t r = 0; r < p; ++r) {
    if (theirs[r].empty()) continue;
    std::vector<int> lengths;
    std::vector<MPI_Aint> displacements;
    for (std::size_t i = 0; i < theirs[r].size(); i += 2) {
      displacements.push_back(static_cast<MPI_Aint>((theirs[r][i] - first) * size));
      lengths.push_back(static_cast<int>(theirs[r][i + 1]));
    }
    MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                             element_, &chunk_types[r]);
    MPI_Type_commit(&chunk_types[r]);
    chunk_counts[r] = 1;
  }
  if (to_chunks)
    MPI_Alltoallw(staged_.data(), mine.counts.data(), staged_displacements.data(), elements.data(),
                  chunk_.data(), chunk_counts.data(), chunk_displacements.data(),
                  chunk_types.data(), comm_);
  else
    MPI_Alltoallw(chunk_.data(), chunk_counts.data(), chunk_displacements.data(),
                  chunk_types.data(), staged_.data(), mine.counts.data(),
                  staged_displacements.data(), elements.data(), comm_);
  for (std::size_t r = 0; r < p; ++r)
    if (chunk_counts[r] > 0) MPI_Type_free(&chunk_types[r]);
}

void TensorFile::own(std::uint64_t offset, const void* data, std::uint64_t bytes) {
  const auto crc = crc32_update(0, data, bytes);
  if (!pieces_.empty() && pieces_.back().offset + pieces_.back().bytes == offset) {
    pieces_.back().crc = crc32_combine(static_cast<std::uint32_t>(pieces_.back().crc), crc, bytes);
    pieces_.back().bytes += bytes;
  } else {
    pieces_.push_back({offset, bytes, crc});
  }
}

std::uint32_t TensorFile::finish() {
  if (writing_ && file_ != MPI_FILE_NULL) {
    // Some MPI-IO layers report a short write (a full disk) only in their own log line: the
    // size the file ended with says it for them.
    failed(MPI_File_sync(file_), "flushing");
    MPI_Offset size = 0;
    if (!failed(MPI_File_get_size(file_, &size), "asking the size") &&
        static_cast<std::uint64_t>(size) != layout_.file_bytes && error_.empty())
      error_ = concat("the file has ", size, " of its ", layout_.file_bytes,
                      " bytes after the write (is the disk full?)");
  }
  if (file_ != MPI_FILE_NULL) failed(MPI_File_close(&file_), "closing");
  agree(writing_ ? "writing" : "reading");
  // Every owner's pieces on rank 0, in file order: they must tile the file exactly.
  int count = static_cast<int>(3 * pieces_.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks_)), starts(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
  for (std::size_t r = 1; r < counts.size(); ++r) starts[r] = starts[r - 1] + counts[r - 1];
  std::vector<std::uint64_t> mine, all(rank_ == 0 ? starts.back() + counts.back() : 0);
  for (const Piece& p : pieces_) mine.insert(mine.end(), {p.offset, p.bytes, p.crc});
  MPI_Gatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), starts.data(),
              MPI_UINT64_T, 0, comm_);
  std::uint32_t crc = 0;
  int complete = 1;
  if (rank_ == 0) {
    std::vector<Piece> pieces;
    for (std::size_t i = 0; i < all.size(); i += 3)
      pieces.push_back({all[i], all[i + 1], all[i + 2]});
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    std::uint64_t at = 0;
    for (const Piece& p : pieces) {
      if (p.offset != at) complete = 0;
      crc = crc32_combine(crc, static_cast<std::uint32_t>(p.crc), p.bytes);
      at = p.offset + p.bytes;
    }
    if (at != layout_.file_bytes) complete = 0;
  }
  MPI_Bcast(&complete, 1, MPI_INT, 0, comm_);
  if (!complete)  // a bug in the ownership of the runs, not the user's
    throw std::logic_error(concat(path_, ": the ranks' pieces do not tile the file"));
  MPI_Bcast(&crc, 1, MPI_UINT32_T, 0, comm_);
  return crc;
}

TensorFileWriter::TensorFileWriter(MPI_Comm comm, const std::string& path,
                                   const SafetensorsLayout& layout,
                                   std::uint64_t round_bytes_per_rank)
    : TensorFile(comm, path, round_bytes_per_rank) {
  writing_ = true;
  layout_ = layout;
  element_ = file_element(layout_);
  failed(MPI_File_open(comm_, path_.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                       &file_),
         "opening for writing");
  agree("opening");
  failed(MPI_File_set_size(file_, 0), "truncating");
  if (rank_ == 0) {
    failed(MPI_File_write_at(file_, 0, layout_.prefix.data(),
                             static_cast<int>(layout_.prefix.size()), MPI_CHAR, MPI_STATUS_IGNORE),
           "writing the header");
    own(0, layout_.prefix.data(), layout_.prefix.size());
  }
}

void TensorFileWriter::write(std::size_t tensor, const std::vector<ShardRun>& runs,
                             const StageRuns& stage) {
  const SafetensorsTensor& t = layout_.tensors[tensor];
  const std::uint64_t size = dtype_bytes(t.dtype);
  std::vector<ShardRun> part;
  for (const Round& round : rounds(tensor)) {
    // Phase 1: every writer's pieces in the round to the ranks whose chunks hold them.
    const Exchange mine = cut(round, runs, part);
    const auto theirs = swap_pieces(mine);
    staged_.resize(static_cast<std::size_t>(mine.starts.back() + mine.counts.back()) * size);
    if (!part.empty()) stage(part, staged_.data());
    const auto [first, last] = round.chunks[static_cast<std::size_t>(rank_)];
    std::uint64_t covered = 0;
    for (const auto& list : theirs)
      for (std::size_t i = 1; i < list.size(); i += 2) covered += list[i];
    if (covered != last - first)  // a bug in which rank writes what, not the user's
      throw std::logic_error(concat(path_, ": tensor ", t.name, ": the writers cover ", covered,
                                    " of the ", last - first, " elements of rank ", rank_,
                                    "'s chunk"));
    chunk_.resize((last - first) * size);
    exchange(round, mine, theirs, /*to_chunks=*/true);
    // Phase 2: this rank's chunk, written with one call.
    if (last == first) continue;
    const std::uint64_t offset = layout_.data_start + t.begin + first * size;
    failed(MPI_File_write_at(file_, static_cast<MPI_Offset>(offset), chunk_.data(),
                             static_cast<int>(last - first), element_, MPI_STATUS_IGNORE),
           "writing");
    own(offset, chunk_.data(), chunk_.size());
  }
}

TensorFileReader::TensorFileReader(MPI_Comm comm, const std::string& path,
                                   std::uint64_t round_bytes_per_rank)
    : TensorFile(comm, path, round_bytes_per_rank) {
  failed(MPI_File_open(comm_, path_.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file_),
         "opening for reading");
  agree("opening");
  // Rank 0 reads the header; every rank parses the same text, so every rank finds the same
  // problem in it.
  MPI_Offset file_bytes = 0;
  failed(MPI_File_get_size(file_, &file_bytes), "asking the size");
  std::string header;
  std::uint64_t length = 0;
  if (rank_ == 0) {
    unsigned char bytes[8] = {};
    if (file_bytes >= 8 &&
        !failed(MPI_File_read_at(file_, 0, bytes, 8, MPI_BYTE, MPI_STATUS_IGNORE),
                "reading the header length"))
      for (int i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
    if (file_bytes < 8 || length > kMaxSafetensorsHeader ||
        length > static_cast<std::uint64_t>(file_bytes) - 8)
      error_ = concat("the file is ", file_bytes, " bytes and its first 8 give a header of ",
                      length, ": not a safetensors file, or truncated");
    else
      header.resize(length);
    if (error_.empty() && length > 0)
      failed(MPI_File_read_at(file_, 8, header.data(), static_cast<int>(length), MPI_CHAR,
                              MPI_STATUS_IGNORE),
             "reading the header");
  }
  agree("reading");
  MPI_Bcast(&file_bytes, 1, MPI_OFFSET, 0, comm_);
  header = broadcast_text(comm_, header);
  length = header.size();
  try {
    layout_ = parse_safetensors_header(header, static_cast<std::uint64_t>(file_bytes));
    element_ = file_element(layout_);
  } catch (const std::runtime_error& e) {
    MPI_File_close(&file_);
    throw UserError(concat(path_, ": ", e.what()));
  }
  if (rank_ == 0) {  // the header's bytes as the file holds them
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    prefix += header;
    own(0, prefix.data(), prefix.size());
  }
}

void TensorFileReader::read(std::size_t tensor, const std::vector<ShardRun>& runs,
                            const UnstageRuns& unstage) {
  const SafetensorsTensor& t = layout_.tensors[tensor];
  const std::uint64_t size = dtype_bytes(t.dtype);
  std::vector<ShardRun> part;
  for (const Round& round : rounds(tensor)) {
    // Phase 1: this rank's chunk, read with one call.
    const auto [first, last] = round.chunks[static_cast<std::size_t>(rank_)];
    chunk_.resize((last - first) * size);
    if (last > first) {
      const std::uint64_t offset = layout_.data_start + t.begin + first * size;
      failed(MPI_File_read_at(file_, static_cast<MPI_Offset>(offset), chunk_.data(),
                              static_cast<int>(last - first), element_, MPI_STATUS_IGNORE),
             "reading");
      own(offset, chunk_.data(), chunk_.size());
    }
    // Phase 2: every rank's requested pieces from the chunks that hold them.
    const Exchange mine = cut(round, runs, part);
    const auto theirs = swap_pieces(mine);
    staged_.resize(static_cast<std::size_t>(mine.starts.back() + mine.counts.back()) * size);
    exchange(round, mine, theirs, /*to_chunks=*/false);
    if (!part.empty()) unstage(part, staged_.data());
  }
}

}  // namespace meshslice
