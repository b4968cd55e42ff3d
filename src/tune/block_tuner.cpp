#include "tune/block_tuner.hpp"

#include <limits>

#include "core/errors.hpp"
#include "gemm/vocab_padding.hpp"

namespace meshslice::tune {

std::string layer_sharding(Stationary s, bool transposed) {
  // Untransposed (gemm/gemm_problem.hpp's shard layouts for the forward GEMM of each row):
  //   Y-stn OS(X, W): X and Y tokens/row, W in/row;  X-stn LS(X, W^T): W kept as W^T, out/row;
  //   W-stn RS(X^T, W): X kept as X^T, in/row. The transposed variant swaps every row and col.
  const char* row = transposed ? "col" : "row";
  const char* col = transposed ? "row" : "col";
  const bool x_transposed = s == Stationary::W, w_transposed = s == Stationary::X;
  return concat("X[tokens/", x_transposed ? col : row, " in/", x_transposed ? row : col, "] W[in/",
                w_transposed ? col : row, " out/", w_transposed ? row : col, "] Y[tokens/", row,
                " out/", col, "]");
}

const MeshChoice& BlockTuning::best_mesh() const {
  if (best >= 0) return meshes[best];
  require(!meshes.empty(), "no mesh shape of ", chips,
          " chips is in the search (both sides at "
          "least search.min_mesh_side, and search.rows rows if set); widen the search");
  std::string why;
  for (const MeshChoice& m : meshes) why += concat("\n  ", m.rows, "x", m.cols, ": ", m.unusable);
  throw UserError(concat("no mesh of ", chips, " chips can run every GEMM of the block:", why,
                         "\nchoose a chip count whose factors divide the model's dimensions, or "
                         "fewer slice candidates / a smaller block size"));
}

MeshChoice tune_mesh(const CostModel& model, const std::vector<sim::FcGemm>& gemms, int rows,
                     int cols, const sim::SweepOptions& options, int only_slices) {
  MeshChoice mesh{rows, cols, {}, {}, 0};
  for (const sim::FcGemm& g : gemms) {
    TunedGemm best{g, 0, std::numeric_limits<double>::infinity()};
    std::string why;
    for (int S : only_slices ? std::vector<int>{only_slices} : options.slices) {
      try {
        check_distributable(g.problem, rows, cols);
        check_sliceable(g.problem, rows, cols, S, sim::gemm_options(S, options).block);
      } catch (const UserError& e) {
        if (why.empty()) why = e.what();
        continue;
      }
      const double t = model.meshslice_seconds(g.problem, rows, cols, S);
      if (t < best.seconds) best = {g, S, t};
    }
    if (best.slices == 0) {
      mesh.unusable = concat(g.label(), ": ", why);
      mesh.gemms.clear();
      mesh.seconds = 0;
      return mesh;
    }
    mesh.seconds += best.seconds;
    mesh.gemms.push_back(best);
  }
  return mesh;
}

BlockTuning tune_block(const CostModel& model, const std::vector<sim::FcGemm>& gemms, int chips,
                       const sim::SweepOptions& options) {
  BlockTuning t;
  t.chips = chips;
  for (const sim::FcGemm& g : gemms) t.flops += g.flops();
  for (const auto& [rows, cols] : sim::mesh_shapes(Algorithm::meshslice, chips, options)) {
    t.meshes.push_back(tune_mesh(model, gemms, rows, cols, options));
    const MeshChoice& m = t.meshes.back();
    if (m.usable() && (t.best < 0 || m.seconds < t.meshes[t.best].seconds))
      t.best = static_cast<int>(t.meshes.size()) - 1;
  }
  return t;
}

MeshChoice tune_lm_head(const CostModel& model, std::size_t hidden, std::size_t vocab,
                        std::size_t tokens, int rows, int cols, const sim::SweepOptions& options) {
  const std::size_t padded =
      mesh_padded_vocab(vocab, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
  return tune_mesh(model, sim::lm_head_gemms(hidden, padded, tokens), rows, cols, options);
}

ModelMesh fastest_model_mesh(const CostModel& model, const BlockTuning& tuning, std::size_t blocks,
                             std::size_t hidden, std::size_t vocab, std::size_t tokens,
                             const sim::SweepOptions& options,
                             const std::function<bool(const MeshChoice&)>& allowed) {
  ModelMesh best;
  double best_seconds = 0;
  for (const MeshChoice& mesh : tuning.meshes) {
    if (!mesh.usable()) {
      best.why = concat(mesh.rows, "x", mesh.cols, ": ", mesh.unusable);
      continue;
    }
    if (allowed && !allowed(mesh)) continue;
    std::shared_ptr<const MeshChoice> head;
    if (vocab > 0) {
      head = std::make_shared<const MeshChoice>(
          tune_lm_head(model, hidden, vocab, tokens, mesh.rows, mesh.cols, options));
      if (!head->usable()) {
        best.why = concat(mesh.rows, "x", mesh.cols, ": the head: ", head->unusable);
        continue;
      }
    }
    const double seconds = static_cast<double>(blocks) * mesh.seconds + (head ? head->seconds : 0);
    if (!best.mesh || seconds < best_seconds) {
      best.mesh = std::make_shared<const MeshChoice>(mesh);
      best.head = head;
      best_seconds = seconds;
    }
  }
  return best;
}

}  // namespace meshslice::tune
