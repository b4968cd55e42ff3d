#pragma once
// Every trainable tensor a rank holds, by name: its global (logical) shape, where this chip's
// shard lies in it (parameters/parameter_layout.hpp), the shard, its gradient and, with ZeRO-1,
// this replica's row of the averaged gradient; and the name and shape of every tensor of the
// model, held here or not. The optimizer (parameters/optimizer.hpp) steps a set; a checkpoint
// (checkpoint/) writes each parameter as its global tensor under its name and reads it back into
// whatever layout the set of another run has, knowing nothing of the model.
//
//     ParameterSet<float> set(model_tensors(shape));
//     Parameter<float>& p = set.add(...);   // while the model is built
//     for (Parameter<float>& p : set) ... p.value, p.grad ...
//     const Parameter<float>* q = set.find("blocks.3.ff1.weight");
//     std::size_t i = set.index_of("blocks.3.ff1.weight");   // npos when not held
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "core/kokkos_types.hpp"
#include "parameters/parameter_layout.hpp"

namespace meshslice {

// x (contiguous) viewed as `rows` rows of its elements, and row r of that view (data-free: the
// shape alone).
template <class T>
Matrix<T> as_rows(const Matrix<T>& x, std::size_t rows) {
  return Matrix<T>(x.data(), rows, elements(x) / rows);
}
template <class T>
Matrix<T> row_of(const Matrix<T>& x, std::size_t rows, std::size_t r) {
  const std::size_t cols = elements(x) / rows;
  return Matrix<T>(x.data() ? x.data() + r * cols : nullptr, 1, cols);
}

template <class T>
struct Parameter {
  std::string name;
  // Its place in the model's order (model_parameter_order): every rank numbers the parameters
  // alike, whichever it holds.
  std::size_t order = 0;
  bool decays = true;   // weight decay: the matrices, not the gains
  ParamShape global;    // the logical shape
  StoredLayout layout;  // this chip's shard within it
  // Copied on every mesh row (the gains): only row 0's copy counts in a norm or a checkpoint.
  bool row_copies = false;
  Matrix<T> value, grad;
  // A bf16 run's weight matrix in bf16, which its layer's GEMMs read (value is then the fp32
  // master weight that the optimizer updates), refreshed from value after every change
  // (parameters/rounded_copies.hpp); empty elsewhere.
  Matrix<bfloat16> rounded;
  // ZeRO-1: the shard is viewed as dp rows; this replica owns row `dp_row`, whose averaged
  // gradient `grad_row` holds and whose optimizer state it alone keeps (empty: not sharded).
  Matrix<T> grad_row;
  std::size_t dp_rows = 1, dp_row = 0;
  // A bf16 run's weight that its layers read only through `rounded`, with ZeRO-1: its fp32
  // master weight is this replica's row alone, as Megatron's distributed optimizer keeps it, and
  // `value` is the shard's shape without data; each step rounds the updated row and all-gathers
  // the bf16 rows into `rounded` (model/parameter_update.hpp). Empty elsewhere.
  Matrix<T> master_row;
  // Its dp averaging's place in the backward order (GradientSync): started under any other
  // place is an error.
  std::size_t sync = 0;

  bool sharded() const { return elements(grad_row) > 0; }
  bool master_sharded() const { return elements(master_row) > 0; }
  // Whether this rank's copy is the one that counts once, in a norm, a sum or a file, among the
  // copies of the replicas and of the mesh rows: replica 0's (mesh row 0's for row copies).
  // The updated part (updated()) of a ZeRO-1 parameter is every replica's own, not a copy, and
  // so is a sharded master's row (values()).
  bool value_counts(int replica, int mesh_row) const {
    return (master_sharded() || replica == 0) && (!row_copies || mesh_row == 0);
  }
  bool update_counts(int replica, int mesh_row) const {
    return (sharded() || replica == 0) && (!row_copies || mesh_row == 0);
  }
  // What the optimizer updates and from which gradient: the shard, or this replica's row.
  Matrix<T> updated() const {
    if (master_sharded()) return master_row;
    return sharded() ? row_of(value, dp_rows, dp_row) : value;
  }
  // The fp32 values this rank keeps: the shard, or a sharded master's row, whose first element
  // is element values_first() of the shard (row-major).
  const Matrix<T>& values() const { return master_sharded() ? master_row : value; }
  std::size_t values_first() const { return master_sharded() ? dp_row * elements(master_row) : 0; }
  const Matrix<T>& update_gradient() const { return sharded() ? grad_row : grad; }
};

// A tensor of the model by name and logical shape, whichever rank holds it.
using NamedShape = std::pair<std::string, ParamShape>;

template <class T>
class ParameterSet {
 public:
  static constexpr std::size_t npos = ~std::size_t{0};

  ParameterSet() = default;
  // `model_tensors`: every parameter of the model, in the model's order, held here or not.
  explicit ParameterSet(std::vector<NamedShape> model_tensors)
      : model_tensors_(std::move(model_tensors)) {}

  Parameter<T>& add(Parameter<T> p) {
    MESHSLICE_ASSERT(index_.emplace(p.name, params_.size()).second, "ParameterSet: parameter ",
                     p.name, " added twice");
    params_.push_back(std::move(p));
    return params_.back();
  }
  std::size_t size() const { return params_.size(); }
  Parameter<T>& operator[](std::size_t i) { return params_[i]; }
  const Parameter<T>& operator[](std::size_t i) const { return params_[i]; }
  auto begin() { return params_.begin(); }
  auto end() { return params_.end(); }
  auto begin() const { return params_.begin(); }
  auto end() const { return params_.end(); }
  // The place of the parameter named `name` in the set (npos: not held).
  std::size_t index_of(const std::string& name) const {
    const auto at = index_.find(name);
    return at == index_.end() ? npos : at->second;
  }
  const Parameter<T>* find(const std::string& name) const {
    const std::size_t i = index_of(name);
    return i == npos ? nullptr : &params_[i];
  }
  // The model's tensors, the same on every rank: what a checkpoint file lists.
  const std::vector<NamedShape>& model_tensors() const { return model_tensors_; }

 private:
  std::vector<NamedShape> model_tensors_;
  std::vector<Parameter<T>> params_;
  std::map<std::string, std::size_t> index_;
};

}  // namespace meshslice
