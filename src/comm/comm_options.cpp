#include "comm/comm_options.hpp"

#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"

namespace meshslice {

bool stage_through_host_by_default() {
  static const bool staged = [] {
    const char* value = std::getenv("MESHSLICE_STAGE_THROUGH_HOST");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return staged;
}

const char* impl_name(CollectiveImpl impl) {
  return impl == CollectiveImpl::native ? "native" : "ring";
}

CollectiveImpl parse_impl(const std::string& name) {
  if (name == "native") return CollectiveImpl::native;
  if (name == "ring") return CollectiveImpl::ring;
  throw UserError(concat("unknown collective implementation '", name,
                         "'; valid implementations: native, ring"));
}

const char* dim_name(MatrixDim dim) { return dim == MatrixDim::rows ? "rows" : "cols"; }

MatrixDim parse_dim(const std::string& name) {
  if (name == "rows") return MatrixDim::rows;
  if (name == "cols") return MatrixDim::cols;
  throw UserError(concat("unknown matrix dimension '", name, "'; valid dimensions: rows, cols"));
}

}  // namespace meshslice
