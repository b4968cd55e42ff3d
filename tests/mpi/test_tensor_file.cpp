// A safetensors file written and read by every rank at once (checkpoint/tensor_file.hpp), in
// rounds of one element per rank up to the default: each element has a writer chosen at random,
// whose runs are its elements' maximal consecutive stretches; the file holds every value where
// the format puts it, its CRC-32 is the one finish() returns, and ranks reading other, overlapping
// runs get the values back. On any number of ranks (uneven domains on 3).
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/tensor_file.hpp"
#include "core/crc32.hpp"

namespace meshslice::testing {
namespace {

namespace fs = std::filesystem;

// The value the file holds at element e of tensor t.
double value_of(std::size_t t, std::uint64_t e) { return 1000.0 * static_cast<double>(t) + e; }

// One rank's runs over the elements `mine` of a tensor (sorted), consecutive elements merged,
// each reading from a buffer that holds this rank's elements in order.
std::vector<ShardRun> runs_of(const std::vector<std::uint64_t>& mine) {
  std::vector<ShardRun> runs;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (!runs.empty() && runs.back().offset + runs.back().length == mine[i])
      ++runs.back().length;
    else
      runs.push_back({mine[i], 1, i, 1});
  }
  return runs;
}

// The elements of an n-element tensor this rank takes, each with probability `share` (the same
// draw on every rank: `owner` picks exactly one rank per element when asked).
std::vector<std::uint64_t> pick(std::uint64_t n, int rank, int ranks, std::uint32_t seed,
                                bool exactly_one) {
  std::mt19937 draw(seed);
  std::vector<std::uint64_t> mine;
  for (std::uint64_t e = 0; e < n; ++e) {
    const auto r = static_cast<int>(draw() % static_cast<std::uint32_t>(ranks));
    const bool also = draw() % 3 == 0;  // readers: a third of the elements on every rank
    if (r == rank || (!exactly_one && also)) mine.push_back(e);
  }
  return mine;
}

TEST(TensorFile, RoundsOfAnySizeWriteAndReadEveryElementOnce) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::vector<SafetensorsTensor> shapes = {
      {"a", "F64", {7, 5}}, {"b", "F64", {1, 1}}, {"c", "F64", {3, 64}}};
  const SafetensorsLayout layout = safetensors_layout(shapes, {{"test", "rounds"}});
  const std::vector<SafetensorsTensor>& tensors = layout.tensors;  // with their places
  int id = static_cast<int>(getpid());  // rank 0's: a name no other test run uses
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string path =
      (fs::temp_directory_path() / ("meshslice-tensor-file-" + std::to_string(id))).string();
  // One element per rank and round, a few, and the default (one round per tensor).
  const std::uint64_t round_sizes[] = {8, 24, kRoundBytesPerRank};
  for (const std::uint64_t round_bytes : round_sizes) {
    SCOPED_TRACE("round bytes per rank " + std::to_string(round_bytes));
    std::uint32_t written_crc = 0;
    {
      TensorFileWriter out(MPI_COMM_WORLD, path, layout, round_bytes);
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        const std::vector<std::uint64_t> mine =
            pick(tensors[t].elements(), rank, ranks, 7 + static_cast<std::uint32_t>(t), true);
        std::vector<double> shard;
        for (std::uint64_t e : mine) shard.push_back(value_of(t, e));
        out.write(t, runs_of(mine), [&](const std::vector<ShardRun>& part, void* to) {
          stage(part, shard.data(), static_cast<double*>(to));
        });
      }
      written_crc = out.finish();
    }
    // The file as a reader of the format sees it (rank 0; no early return, which would leave
    // the other ranks waiting in the collective reads below).
    std::string bytes;
    if (rank == 0) {
      std::ifstream file(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(file), {});
    }
    if (rank == 0 && bytes.size() == layout.file_bytes) {
      EXPECT_EQ(bytes.compare(0, layout.prefix.size(), layout.prefix), 0);
      EXPECT_EQ(crc32_update(0, bytes.data(), bytes.size()), written_crc);
      std::size_t wrong = 0;
      for (std::size_t t = 0; t < tensors.size(); ++t)
        for (std::uint64_t e = 0; e < tensors[t].elements(); ++e) {
          double v = 0;
          std::memcpy(&v, bytes.data() + layout.data_start + tensors[t].begin + 8 * e, 8);
          wrong += v != value_of(t, e);
        }
      EXPECT_EQ(wrong, 0u) << "elements not where the format puts them";
    } else if (rank == 0) {
      ADD_FAILURE() << "the file has " << bytes.size() << " bytes, not " << layout.file_bytes;
    }
    TensorFileReader in(MPI_COMM_WORLD, path, round_bytes);
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const std::vector<std::uint64_t> mine =
          pick(tensors[t].elements(), rank, ranks, 70 + static_cast<std::uint32_t>(t), false);
      std::vector<double> shard(mine.size(), -1.0);
      in.read(t, runs_of(mine), [&](const std::vector<ShardRun>& part, const void* from) {
        unstage(part, static_cast<const double*>(from), shard.data());
      });
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < mine.size(); ++i) wrong += shard[i] != value_of(t, mine[i]);
      EXPECT_EQ(wrong, 0u) << "of the " << mine.size() << " elements of " << tensors[t].name
                           << " read back";
    }
    EXPECT_EQ(in.finish(), written_crc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove(path);
}

}  // namespace
}  // namespace meshslice::testing
