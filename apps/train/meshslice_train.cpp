// meshslice-train: trains transformer blocks, on the synthetic teacher task or as a language
// model on a token dataset, with 2D tensor parallelism (each FC layer's GEMMs through the
// paper's Table 1 dataflows) plus data and pipeline parallelism, configured by an input deck.
#include "train_run.hpp"
#include "train_settings.hpp"

int main(int argc, char** argv) {
  meshslice::AppSpec spec{
      "meshslice-train",
      "Trains L pre-norm transformer blocks end to end on a 2D torus (tensor parallelism over "
      "mesh rows x cols, MeshSlice or a baseline per GEMM) with data parallelism over mesh.dp, on "
      "a synthetic task (train.task = teacher: a fixed random teacher of the same shape maps "
      "random inputs to targets, MSE loss) or as a language model on a token dataset "
      "(train.task = lm, data.prefix: inputs/train/laptop-lm.yaml). Prints the plan and memory "
      "estimate, a progress line per step (with the time left) and the held-out loss; writes "
      "OUT/train.csv (a row per step), TensorBoard event files (OUT/tensorboard), the loss plot "
      "OUT/train.png, OUT/summary.json, OUT/deck.yaml and checkpoints (OUT/checkpoints/step-N: the "
      "model and optimizer as safetensors of global tensors, loadable on any mesh; --resume "
      "auto continues the newest).",
      "train/laptop.yaml",
      meshslice::train::valid_parameters,
      {{"plan", {"plan.source=file", "plan.file={}"}},  // a plan file, e.g. meshslice-tune's
       {"resume", {"checkpoint.resume={}"}}},           // a checkpoint, or auto
      {{"checkpointing.blocks", "recompute.blocks",
        "activation recomputation; 'checkpoint' now means saved training state"}}};
  return meshslice::run_app(argc, argv, spec, meshslice::train::run_training);
}
