#include "tune/joint_planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/errors.hpp"
#include "sim/sweep.hpp"

namespace meshslice::tune {

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

// Phases 1 and 2 for each micro-batch size and tensor-parallel degree, made once.
class TuningCache {
 public:
  TuningCache(const CostModel& model, const TrainingModel& m, const PlannerOptions& o)
      : model_(model), m_(m), o_(o) {}

  // The fastest usable mesh of `tp` chips for micro-batches of `sequences` sequences whose
  // rows split the sequences whole (meshslice-train keeps whole sequences on a mesh row),
  // counting all the blocks and the head; no mesh, with the reason in `why`, when none.
  const ModelMesh& mesh(std::size_t sequences, int tp) {
    const auto key = std::make_pair(sequences, tp);
    auto it = chosen_.find(key);
    if (it == chosen_.end()) it = chosen_.emplace(key, choose(sequences, tp)).first;
    return it->second;
  }

 private:
  ModelMesh choose(std::size_t sequences, int tp) const {
    const std::size_t tokens = sequences * m_.seq_len;
    const BlockTuning tuning =
        tune_block(model_, sim::block_gemms(m_.llm, tokens, o_.attention), tp, o_.search);
    ModelMesh c = fastest_model_mesh(model_, tuning, m_.blocks, m_.llm.hidden, m_.vocab, tokens,
                                     o_.search, [&](const MeshChoice& mesh) {
                                       return sequences % static_cast<std::size_t>(mesh.rows) == 0;
                                     });
    if (!c.mesh && c.why.empty())
      c.why = concat("no mesh of ", tp, " chips fits every GEMM with whole sequences per mesh row");
    return c;
  }

  const CostModel& model_;
  const TrainingModel& m_;
  const PlannerOptions& o_;
  std::map<std::pair<std::size_t, int>, ModelMesh> chosen_;
};

}  // namespace

const Candidate& PlanSearch::best() const {
  if (!ranked.empty()) return ranked.front();
  std::string why;
  for (const Rejected& r : closest)
    why += concat("\n  ", r.config.str(), ": ", r.constraint, ": ", r.detail);
  std::string counts;
  for (const auto& [constraint, count] : rejected)
    counts += concat(counts.empty() ? "" : ", ", count, " by ", constraint);
  throw UserError(concat("no configuration fits (rejected: ", counts, "); the closest:", why,
                         "\nuse more chips, a smaller global batch or sequence, or allow "
                         "checkpointing, ZeRO-1 and more micro-batches"));
}

PlanSearch plan_training(const CostModel& model, const TrainingModel& m, int chips,
                         const PlannerOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const TensorBytes bytes = o.tensor_bytes.value_or(TensorBytes::pure(model.element_bytes()));
  require(o.memory_bytes > 0, "the planner needs a memory capacity per chip");
  PlanSearch out;
  TuningCache cache(model, m, o);
  std::vector<Candidate> fits;
  std::vector<Rejected> rejected;
  const auto reject = [&](const TrainingConfig& c, const std::string& constraint,
                          const std::string& detail, double excess = 0) {
    ++out.rejected[constraint];
    rejected.push_back({c, constraint, detail, excess});
  };
  for (int dp : divisors(chips))
    for (int pp : divisors(chips / dp)) {
      TrainingConfig c;
      c.dp = dp;
      c.pp = pp;
      const int tp = chips / dp / pp;
      c.cols = tp;
      if (static_cast<std::size_t>(pp) > m.blocks) {
        reject(c, "stages", concat(pp, " stages for ", m.blocks, " blocks"));
        continue;
      }
      if (m.global_batch % dp) {
        reject(c, "batch split", concat(m.global_batch, " sequences over ", dp, " replicas"));
        continue;
      }
      const std::size_t per_replica = m.global_batch / dp;
      for (std::size_t micro : o.microbatches) {
        c.microbatches = micro;
        if (per_replica % micro) {
          reject(c, "batch split",
                 concat(per_replica, " sequences per replica in ", micro, " micro-batches"));
          continue;
        }
        const auto& choice = cache.mesh(per_replica / micro, tp);
        const auto& mesh = choice.mesh;
        if (!mesh) {
          reject(c, "mesh", choice.why);
          continue;
        }
        c.rows = mesh->rows;
        c.cols = mesh->cols;
        for (PipelineSchedule schedule : o.schedules) {
          // One stage: GPipe takes 1F1B's time and holds more activations.
          if (pp == 1 && schedule == PipelineSchedule::gpipe &&
              std::count(o.schedules.begin(), o.schedules.end(), PipelineSchedule::one_f_one_b))
            continue;
          c.schedule = schedule;
          const bool interleaved = schedule == PipelineSchedule::interleaved;
          c.virtual_stages = interleaved ? o.virtual_stages : 1;
          if (interleaved && (pp < 2 || micro % static_cast<std::size_t>(pp) != 0 ||
                              static_cast<std::size_t>(pp) * c.virtual_stages > m.blocks)) {
            reject(c, "schedule",
                   "interleaving needs pp >= 2, micro-batches a multiple of pp "
                   "and pp x virtual stages <= blocks");
            continue;
          }
          for (bool checkpointing : o.checkpointing)
            for (bool zero : o.zero) {
              if (zero && dp == 1) continue;  // nothing to shard: the same as without
              c.checkpointing = checkpointing;
              c.zero = zero;
              const MeshChoice* head = choice.head.get();
              Candidate k{c,
                          mesh,
                          choice.head,
                          estimate_step(model, m, c, *mesh, head, &bytes),
                          estimate_memory(m, c, *mesh, bytes, head),
                          0};
              k.flop_utilization =
                  sim::flop_utilization(step_flops(m), chips, k.step.total(), model.machine());
              if (k.memory.total() > o.memory_bytes) {
                reject(c, "memory",
                       concat(std::lround(mib(k.memory.total())), " MiB > ",
                              std::lround(mib(o.memory_bytes)), " MiB per chip"),
                       k.memory.total() / o.memory_bytes);
                continue;
              }
              fits.push_back(std::move(k));
            }
        }
      }
    }
  // Fastest first; of equally fast ones, the one that needs less memory.
  std::stable_sort(fits.begin(), fits.end(), [](const Candidate& a, const Candidate& b) {
    if (a.step.total() != b.step.total()) return a.step.total() < b.step.total();
    return a.memory.total() < b.memory.total();
  });
  out.feasible = fits.size();
  fits.resize(std::min(fits.size(), o.top));
  out.ranked = std::move(fits);
  // The nearest misses: memory overruns by how far over, then the others as found.
  std::stable_sort(rejected.begin(), rejected.end(), [](const Rejected& a, const Rejected& b) {
    return (a.excess > 0 ? a.excess : 1e300) < (b.excess > 0 ? b.excess : 1e300);
  });
  rejected.resize(std::min<std::size_t>(rejected.size(), 5));
  out.closest = std::move(rejected);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string why_slower(const Candidate& c, const Candidate& best) {
  const std::pair<const char*, double> parts[] = {
      {"FC compute", c.step.compute - best.step.compute},
      {"bubble", c.step.bubble - best.step.bubble},
      {"pp transfers", c.step.pp_transfers - best.step.pp_transfers},
      {"dp exposed", c.step.dp_exposed - best.step.dp_exposed}};
  const auto worst =
      std::max_element(std::begin(parts), std::end(parts),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (worst->second <= 0) return "-";
  char ms[32];
  std::snprintf(ms, sizeof ms, "%+.1f ms", worst->second * 1e3);
  return concat(worst->first, " ", ms);
}

}  // namespace meshslice::tune
