#include "checkpoint/tensor_file.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "core/crc32.hpp"
#include "core/errors.hpp"

namespace meshslice {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

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

TensorFile::TensorFile(MPI_Comm comm, std::string path) : comm_(comm), path_(std::move(path)) {}

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
  const int rank = rank_of(comm_);
  int first = error_.empty() ? INT_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm_);
  if (first == INT_MAX) return;
  int length = static_cast<int>(error_.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm_);
  std::string message = error_;
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first, comm_);
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  throw UserError(concat(what, " ", path_, " failed on rank ", first, ": ", message));
}

void TensorFile::view(std::size_t tensor, const std::vector<ShardRun>& runs) {
  const SafetensorsTensor& t = layout_.tensors.at(tensor);
  const MPI_Offset start = static_cast<MPI_Offset>(layout_.data_start + t.begin);
  const std::uint64_t size = dtype_bytes(t.dtype);
  MPI_Datatype filetype = element_;
  if (!runs.empty()) {
    std::vector<int> lengths;
    std::vector<MPI_Aint> displacements;
    lengths.reserve(runs.size());
    displacements.reserve(runs.size());
    for (const ShardRun& run : runs) {
      if (run.length > static_cast<std::uint64_t>(INT_MAX))
        throw std::runtime_error(concat("tensor ", t.name, ": a run of ", run.length,
                                        " elements is more than MPI counts"));
      lengths.push_back(static_cast<int>(run.length));
      displacements.push_back(static_cast<MPI_Aint>(run.offset * size));
    }
    MPI_Type_create_hindexed(static_cast<int>(runs.size()), lengths.data(), displacements.data(),
                             element_, &filetype);
    MPI_Type_commit(&filetype);
  }
  failed(MPI_File_set_view(file_, start, element_, filetype, "native", MPI_INFO_NULL),
         "setting the file view");
  if (filetype != element_) MPI_Type_free(&filetype);
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

void TensorFile::own_runs(std::size_t tensor, const std::vector<ShardRun>& runs,
                          const void* staged) {
  const SafetensorsTensor& t = layout_.tensors[tensor];
  const std::uint64_t size = dtype_bytes(t.dtype);
  const char* at = static_cast<const char*>(staged);
  for (const ShardRun& run : runs) {
    own(layout_.data_start + t.begin + run.offset * size, at, run.length * size);
    at += run.length * size;
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
  const int rank = rank_of(comm_);
  int ranks = 1;
  MPI_Comm_size(comm_, &ranks);
  int count = static_cast<int>(3 * pieces_.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), starts(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
  for (std::size_t r = 1; r < counts.size(); ++r) starts[r] = starts[r - 1] + counts[r - 1];
  std::vector<std::uint64_t> mine, all(rank == 0 ? starts.back() + counts.back() : 0);
  for (const Piece& p : pieces_) mine.insert(mine.end(), {p.offset, p.bytes, p.crc});
  MPI_Gatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), starts.data(),
              MPI_UINT64_T, 0, comm_);
  std::uint32_t crc = 0;
  int complete = 1;
  if (rank == 0) {
    std::vector<Piece> pieces;
    for (std::size_t i = 0; i < all.size(); i += 3) pieces.push_back({all[i], all[i + 1], all[i + 2]});
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
  if (rank_of(comm_) == 0) {
    failed(MPI_File_write_at(file_, 0, layout_.prefix.data(),
                             static_cast<int>(layout_.prefix.size()), MPI_CHAR, MPI_STATUS_IGNORE),
           "writing the header");
    own(0, layout_.prefix.data(), layout_.prefix.size());
  }
}

void TensorFileWriter::write(std::size_t tensor, const std::vector<ShardRun>& runs,
                             const void* staged, bool owned) {
  view(tensor, runs);
  std::uint64_t elements = 0;
  for (const ShardRun& run : runs) elements += run.length;
  failed(MPI_File_write_all(file_, staged, static_cast<int>(elements), element_,
                            MPI_STATUS_IGNORE),
         "writing");
  if (owned) own_runs(tensor, runs, staged);
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
  if (rank_of(comm_) == 0) {
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
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm_);
  header.resize(length);
  MPI_Bcast(header.data(), static_cast<int>(length), MPI_CHAR, 0, comm_);
  try {
    layout_ = parse_safetensors_header(header, static_cast<std::uint64_t>(file_bytes));
    element_ = file_element(layout_);
  } catch (const std::runtime_error& e) {
    MPI_File_close(&file_);
    throw UserError(concat(path_, ": ", e.what()));
  }
  if (rank_of(comm_) == 0) {  // the header's bytes as the file holds them
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    prefix += header;
    own(0, prefix.data(), prefix.size());
  }
}

void TensorFileReader::read(std::size_t tensor, const std::vector<ShardRun>& runs, void* staged,
                            bool owned) {
  view(tensor, runs);
  std::uint64_t elements = 0;
  for (const ShardRun& run : runs) elements += run.length;
  failed(MPI_File_read_all(file_, staged, static_cast<int>(elements), element_,
                           MPI_STATUS_IGNORE),
         "reading");
  if (owned) own_runs(tensor, runs, staged);
}

}  // namespace meshslice
