#include "gemm/algorithm.hpp"

#include "core/errors.hpp"

namespace meshslice {

namespace {
struct Named {
  Algorithm algorithm;
  const char* name;
};
const Named kNames[] = {{Algorithm::meshslice, "meshslice"},
                        {Algorithm::collective, "collective"},
                        {Algorithm::summa, "summa"},
                        {Algorithm::cannon, "cannon"},
                        {Algorithm::wang, "wang"},
                        {Algorithm::tp1d, "1dtp"},
                        {Algorithm::fsdp, "fsdp"}};

enum class Split { rows, cols };

// Row/column split of each matrix for the 1D algorithms, indexed [dataflow][A, B, C].
Split split_1d(Algorithm algorithm, Dataflow flow, char matrix) {
  const int m = matrix == 'A' ? 0 : matrix == 'B' ? 1 : 2;
  static const Split tp1d[3][3] = {{Split::rows, Split::cols, Split::cols},   // OS
                                   {Split::cols, Split::cols, Split::rows},   // LS
                                   {Split::rows, Split::cols, Split::cols}};  // RS
  if (algorithm == Algorithm::tp1d) return tp1d[static_cast<int>(flow)][m];
  return Split::rows;  // FSDP splits everything by rows (batch for activations, rows of W)
}
}  // namespace

const char* wang_ring_name(WangRing ring) { return ring == WangRing::col ? "col" : "row"; }

const char* algorithm_name(Algorithm algorithm) {
  for (const auto& n : kNames)
    if (n.algorithm == algorithm) return n.name;
  return "?";
}

Algorithm parse_algorithm(const std::string& name) {
  std::string valid;
  for (const auto& n : kNames) {
    if (name == n.name) return n.algorithm;
    valid += concat(valid.empty() ? "" : ", ", n.name);
  }
  throw UserError(concat("unknown GEMM algorithm '", name, "'; valid algorithms: ", valid));
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (const auto& n : kNames) v.push_back(n.algorithm);
    return v;
  }();
  return all;
}

void check_layout(Algorithm algorithm, const GemmProblem& problem, int mesh_rows, int mesh_cols) {
  if (algorithm != Algorithm::tp1d && algorithm != Algorithm::fsdp)
    return check_distributable(problem, mesh_rows, mesh_cols);
  require(problem.M > 0 && problem.N > 0 && problem.K > 0, "GEMM shapes must be positive, got ",
          problem.str());
  const std::size_t parts = static_cast<std::size_t>(mesh_rows) * mesh_cols;
  for (char matrix : {'A', 'B', 'C'}) {
    const MatrixShape global = matrix == 'A'   ? problem.global_a()
                               : matrix == 'B' ? problem.global_b()
                                               : problem.global_c();
    const bool rows = split_1d(algorithm, problem.flow, matrix) == Split::rows;
    const std::size_t extent = rows ? global.rows : global.cols;
    require(extent % parts == 0, algorithm_name(algorithm), " ", problem.str(), ": matrix ", matrix,
            " is ", global.rows, "x", global.cols, " and its ", rows ? "rows" : "columns", " (",
            extent, ") must be divisible by the ", parts, " chips of the tensor-parallel ring");
  }
}

ShardRegion shard_region(Algorithm algorithm, const GemmProblem& problem, char matrix,
                         int mesh_rows, int mesh_cols, int i, int j) {
  const MatrixShape global = matrix == 'A'   ? problem.global_a()
                             : matrix == 'B' ? problem.global_b()
                                             : problem.global_c();
  if (algorithm != Algorithm::tp1d && algorithm != Algorithm::fsdp) {
    const std::size_t r = global.rows / mesh_rows, c = global.cols / mesh_cols;
    return {i * r, r, j * c, c};
  }
  const std::size_t parts = static_cast<std::size_t>(mesh_rows) * mesh_cols;
  const std::size_t t = static_cast<std::size_t>(i) * mesh_cols + j;
  if (split_1d(algorithm, problem.flow, matrix) == Split::rows) {
    const std::size_t r = global.rows / parts;
    return {t * r, r, 0, global.cols};
  }
  const std::size_t c = global.cols / parts;
  return {0, global.rows, t * c, c};
}

}  // namespace meshslice
