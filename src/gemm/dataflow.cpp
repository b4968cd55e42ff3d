#include "gemm/dataflow.hpp"

#include <cctype>

#include "core/errors.hpp"

namespace meshslice {

const char* dataflow_name(Dataflow flow) {
  switch (flow) {
    case Dataflow::OS: return "OS";
    case Dataflow::LS: return "LS";
    case Dataflow::RS: return "RS";
  }
  return "?";
}

Dataflow parse_dataflow(const std::string& name) {
  std::string upper;
  for (char ch : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS})
    if (upper == dataflow_name(flow)) return flow;
  throw UserError(concat("unknown dataflow '", name,
                         "'; valid dataflows: os (C = A B), ls (C = A B^T), rs (C = A^T B)"));
}

}  // namespace meshslice
