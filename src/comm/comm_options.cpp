#include "comm/comm_options.hpp"

#include "core/errors.hpp"

namespace meshslice {

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
