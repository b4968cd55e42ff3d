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

// The file's scalar for a dtype.
MPI_Datatype mpi_element(const std::string& dtype) {
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

TensorFile::TensorFile(MPI_Comm comm, std::string path) : comm_(comm), path_(std::move(path)) {
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

std::pair<std::uint64_t, std::uint64_t> TensorFile::domain(std::size_t tensor, int rank) const {
  const std::uint64_t n = layout_.tensors.at(tensor).elements();
  const auto r = static_cast<std::uint64_t>(rank), p = static_cast<std::uint64_t>(ranks_);
  return {n * r / p, n * (r + 1) / p};
}

TensorFile::Exchange TensorFile::cut(std::size_t tensor, const std::vector<ShardRun>& runs) const {
  Exchange out;
  out.pieces.resize(static_cast<std::size_t>(ranks_));
  out.counts.assign(out.pieces.size(), 0);
  out.starts.assign(out.pieces.size(), 0);
  std::uint64_t at = 0;  // elements of the buffer in the runs' order so far
  std::size_t rank = 0;
  for (const ShardRun& run : runs)
    for (std::uint64_t first = run.offset, end = run.offset + run.length; first < end;) {
      while (domain(tensor, static_cast<int>(rank)).second <= first)  // the next domain's start
        out.starts[++rank] = static_cast<int>(at);
      const std::uint64_t last = std::min(end, domain(tensor, static_cast<int>(rank)).second);
      out.pieces[rank].insert(out.pieces[rank].end(), {first, last - first});
      out.counts[rank] += static_cast<int>(last - first);
      at += last - first;
      first = last;
    }
  for (std::size_t r = rank + 1; r < out.starts.size(); ++r) out.starts[r] = static_cast<int>(at);
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
                                   const SafetensorsLayout& layout)
    : TensorFile(comm, path) {
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
                             const void* staged) {
  // Phase 1: every writer's pieces to the ranks whose domains hold them.
  const Exchange out = cut(tensor, runs);
  const auto pieces = swap_pieces(out);
  std::vector<int> counts(pieces.size()), starts(pieces.size());
  for (std::size_t r = 0; r < pieces.size(); ++r) {
    for (std::size_t i = 1; i < pieces[r].size(); i += 2)
      counts[r] += static_cast<int>(pieces[r][i]);
    if (r > 0) starts[r] = starts[r - 1] + counts[r - 1];
  }
  const SafetensorsTensor& t = layout_.tensors[tensor];
  const std::uint64_t size = dtype_bytes(t.dtype);
  exchanged_.resize((static_cast<std::size_t>(starts.back()) + counts.back()) * size);
  MPI_Alltoallv(staged, out.counts.data(), out.starts.data(), element_, exchanged_.data(),
                counts.data(), starts.data(), element_, comm_);
  // Phase 2: this rank's domain, put together and written with one call.
  const auto [first, last] = domain(tensor, rank_);
  domain_.resize((last - first) * size);
  std::uint64_t covered = 0;
  const char* from = exchanged_.data();
  for (const auto& list : pieces)
    for (std::size_t i = 0; i < list.size(); i += 2) {
      std::memcpy(domain_.data() + (list[i] - first) * size, from, list[i + 1] * size);
      from += list[i + 1] * size;
      covered += list[i + 1];
    }
  if (covered != last - first)  // a bug in which rank writes what, not the user's
    throw std::logic_error(concat(path_, ": tensor ", t.name, ": the writers cover ", covered,
                                  " of the ", last - first, " elements of rank ", rank_,
                                  "'s domain"));
  const std::uint64_t offset = layout_.data_start + t.begin + first * size;
  failed(MPI_File_write_at_all(file_, static_cast<MPI_Offset>(offset), domain_.data(),
                               static_cast<int>(last - first), element_, MPI_STATUS_IGNORE),
         "writing");
  own(offset, domain_.data(), domain_.size());
}

TensorFileReader::TensorFileReader(MPI_Comm comm, const std::string& path)
    : TensorFile(comm, path) {
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
                            void* staged) {
  // Phase 1: this rank's domain, read with one call.
  const SafetensorsTensor& t = layout_.tensors[tensor];
  const std::uint64_t size = dtype_bytes(t.dtype);
  const auto [first, last] = domain(tensor, rank_);
  domain_.resize((last - first) * size);
  const std::uint64_t offset = layout_.data_start + t.begin + first * size;
  failed(MPI_File_read_at_all(file_, static_cast<MPI_Offset>(offset), domain_.data(),
                              static_cast<int>(last - first), element_, MPI_STATUS_IGNORE),
         "reading");
  own(offset, domain_.data(), domain_.size());
  // Phase 2: every rank's requested pieces from the domains that hold them.
  const Exchange in = cut(tensor, runs);
  const auto requests = swap_pieces(in);
  std::vector<int> counts(requests.size()), starts(requests.size());
  std::uint64_t elements = 0;
  for (std::size_t r = 0; r < requests.size(); ++r)
    for (std::size_t i = 1; i < requests[r].size(); i += 2) elements += requests[r][i];
  exchanged_.resize(elements * size);
  char* to = exchanged_.data();
  for (std::size_t r = 0; r < requests.size(); ++r) {
    starts[r] = static_cast<int>((to - exchanged_.data()) / static_cast<std::ptrdiff_t>(size));
    for (std::size_t i = 0; i < requests[r].size(); i += 2) {
      std::memcpy(to, domain_.data() + (requests[r][i] - first) * size, requests[r][i + 1] * size);
      to += requests[r][i + 1] * size;
      counts[r] += static_cast<int>(requests[r][i + 1]);
    }
  }
  MPI_Alltoallv(exchanged_.data(), counts.data(), starts.data(), element_, staged,
                in.counts.data(), in.starts.data(), element_, comm_);
}

}  // namespace meshslice
