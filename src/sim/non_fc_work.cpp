#include "sim/non_fc_work.hpp"

#include <string>

#include "core/errors.hpp"
#include "exec/sim_executor.hpp"
#include "block/block_module.hpp"

namespace meshslice::sim {

NonFcTime non_fc_time(const hw::MachineModel& machine, const LlmSpec& llm, std::size_t tokens,
                      std::size_t sequence, int rows, int cols) {
  NonFcTime t;
  const std::size_t sequences = tokens / sequence, heads = static_cast<std::size_t>(llm.heads);
  const std::size_t kv_heads = kv_heads_of(heads, llm.kv_heads);
  if (sequences % rows || heads % cols || kv_heads % cols) {
    const std::string grouped =
        kv_heads < heads ? concat(" (", kv_heads, " key and value heads)") : std::string();
    t.why_not = concat(sequences, " sequences over ", rows, " rows or ", heads, " heads", grouped,
                       " over ", cols, " columns do not split whole");
    return t;
  }
  const AttentionShape attention{sequences / rows, sequence, heads / cols, llm.hidden / heads};
  const double chip_tokens = static_cast<double>(attention.seqs * sequence);
  const double chip_hidden = static_cast<double>(llm.hidden / cols);
  const double chip_ffn = static_cast<double>(llm.ffn_hidden() / cols);
  const double chip_kv_hidden = static_cast<double>(llm.dims().kv_hidden / cols);
  const BlockWork work = block_non_fc_work(
      {attention, chip_tokens, chip_hidden, chip_ffn * chip_tokens, llm.mlp, chip_kv_hidden});
  SimExecutor chip(machine, rows, cols);
  chip.local_work("non_fc_forward", work.forward);
  chip.local_work("non_fc_backward", work.backward);
  t.seconds = chip.now();
  t.flops = work.forward.flops() + work.backward.flops();
  return t;
}

}  // namespace meshslice::sim
