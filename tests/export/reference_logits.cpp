// meshslice-test-reference-logits CHECKPOINT TEXT OUT.json: what meshslice's model says of a
// text, for comparing an exported model with (tests/scripts/check_export_llama.py). Loads the
// checkpoint into the serial reference language model (model/reference_lm.hpp, which the
// distributed model matches to 1e-9 in double), takes TEXT's first seq_len bytes as token ids
// (meshslice-data's: byte b is id b) and writes their logits (seq_len x vocab), the mean
// cross-entropy of the next tokens and the greedy continuation of TEXT's first byte, in double.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_reader.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "model/block_layers.hpp"
#include "model/model_shape_record.hpp"
#include "model/reference_lm.hpp"

using namespace meshslice;

namespace {

// The reference language model with the checkpoint's weights.
ReferenceLm<double> load(const SerialCheckpoint& c, const ModelShape& shape) {
  ReferenceLm<double> lm(shape, 1);
  for (std::size_t b = 0; b < shape.blocks; ++b)
    for (ParamKind kind : block_param_kinds())
      lm.blocks().param(b, kind) = c.tensor(parameter_name(b, kind)).values;
  for (const LmParam p : {LmParam::embedding, LmParam::final_norm_gain, LmParam::lm_head})
    if (p != LmParam::lm_head || !shape.tied_head)
      lm.param(p) = c.tensor(lm_parameter_name(p)).values;
  return lm;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    require(argc == 4, "usage: meshslice-test-reference-logits CHECKPOINT TEXT OUT.json");
    const SerialCheckpoint c = read_checkpoint_serially(argv[1]);
    const ModelShape shape = recorded_model_shape(argv[1], c.model);
    const ReferenceLm<double> lm = load(c, shape);
    const std::string text = argv[2];
    const std::size_t n = shape.seq_len;
    require(text.size() >= n + 1, "the text needs at least seq_len + 1 = ", n + 1, " bytes");
    std::vector<int> ids(n), targets(n);
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = static_cast<unsigned char>(text[i]);
      targets[i] = static_cast<unsigned char>(text[i + 1]);
    }
    const std::vector<double> logits = lm.logits(ids);
    // Greedy decoding from the text's first byte, a token at a time, as meshslice-train's samples.
    std::vector<int> sequence(n, 0);
    sequence[0] = ids[0];
    for (std::size_t i = 0; i + 1 < n; ++i) sequence[i + 1] = lm.next_token(sequence, i);
    json::Value out = json::Value::object();
    json::Value ids_json = json::Value::array(), logits_json = json::Value::array(),
                greedy = json::Value::array();
    for (const int id : ids) ids_json.push_back(id);
    for (const double v : logits) logits_json.push_back(v);
    for (const int id : sequence) greedy.push_back(id);
    out.set("ids", ids_json);
    out.set("vocab", shape.vocab);
    out.set("logits", logits_json);
    out.set("loss", static_cast<double>(lm.loss(ids, targets)));
    out.set("greedy", greedy);
    std::ofstream(argv[3]) << out.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "meshslice-test-reference-logits: error: " << e.what() << std::endl;
    return 2;
  }
}
