#pragma once
// The MeshSlice autotuner (paper §3.2) for the FC layers of one transformer block.
//   Phase 1, dataflow and sharding (§3.2.1): sim::block_gemms picks each layer's row of Table 1
//     (the largest of X, W, Y stationary) and its transposed variant (gemm/fc_dataflow.hpp), which
//     fix the three GEMMs of each layer and the sharding of every tensor (layer_sharding).
//   Phase 2, mesh shape and slice count (§3.2.2): on every factorization rows x cols of the
//     chips, each GEMM takes the S with the shortest cost-model time among the valid candidates,
//     independently of the others (the authors' published tuner then overwrites the per-layer
//     choice with one global S; this one does not). The mesh with the shortest block wins.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/fc_layers.hpp"
#include "sim/sweep.hpp"
#include "tune/cost_model.hpp"

namespace meshslice::tune {

// Which mesh axis splits each dimension of a layer's X (tokens x in), W (in x out) and
// Y (tokens x out), e.g. "X[tokens/row in/col] W[in/row out/col] Y[tokens/row out/col]".
std::string layer_sharding(Stationary stationary, bool transposed);

struct TunedGemm {
  sim::FcGemm gemm;
  int slices = 0;
  double seconds = 0;  // predicted
};

struct MeshChoice {
  int rows = 0;
  int cols = 0;
  std::vector<TunedGemm> gemms;  // in block order; empty when unusable
  std::string unusable;          // why not, when some GEMM fits no candidate S on this mesh
  double seconds = 0;            // predicted: the GEMMs one after another

  bool usable() const { return unusable.empty(); }
};

struct BlockTuning {
  int chips = 0;
  double flops = 0;                // useful FLOPs of the block's GEMMs, whole cluster
  std::vector<MeshChoice> meshes;  // every factorization, in order of rows
  int best = -1;                   // index of the fastest usable mesh; -1 if none

  const MeshChoice& best_mesh() const;  // UserError naming why each mesh failed, if none is usable
};

// Phase 2 on one mesh; `only_slices` > 0 forces that S on every GEMM (the slice study).
MeshChoice tune_mesh(const CostModel& model, const std::vector<sim::FcGemm>& gemms, int rows,
                     int cols, const sim::SweepOptions& options, int only_slices = 0);

// Phase 2 over every mesh of `chips` chips with both sides >= options.min_mesh_side.
BlockTuning tune_block(const CostModel& model, const std::vector<sim::FcGemm>& gemms, int chips,
                       const sim::SweepOptions& options);

// Phase 2 for a language model's head (hidden -> vocab) on one mesh, for `tokens` tokens per
// micro-batch: its GEMMs on the vocabulary as meshslice-train pads it for the mesh.
MeshChoice tune_lm_head(const CostModel& model, std::size_t hidden, std::size_t vocab,
                        std::size_t tokens, int rows, int cols, const sim::SweepOptions& options);

// A model's mesh: of `tuning`'s usable meshes that `allowed` accepts, the one fastest for
// `blocks` blocks and, with a vocabulary (vocab > 0), the head (tune_lm_head) together.
struct ModelMesh {
  std::shared_ptr<const MeshChoice> mesh;  // null when none
  std::shared_ptr<const MeshChoice> head;  // null without a vocabulary
  std::string why;                         // the last mesh's problem, when there is none
};
ModelMesh fastest_model_mesh(const CostModel& model, const BlockTuning& tuning, std::size_t blocks,
                             std::size_t hidden, std::size_t vocab, std::size_t tokens,
                             const sim::SweepOptions& options,
                             const std::function<bool(const MeshChoice&)>& allowed = nullptr);

}  // namespace meshslice::tune
