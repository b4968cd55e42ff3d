#pragma once
// A transformer block on a rank as the list of its modules, in the order of their declarations
// (block/block_module.hpp's block_modules()): the block's input runs through each module in
// turn, module m stepping from its input stream to the next module's (the last to the block's
// output), and the gradients back the other way. Each module is a class with
//
//     using Layer = ...;                        // its layers, as its declaration lists them
//     struct Saved {...};                       // what it keeps for its backward pass
//     static Saved make_saved(SavedTensorMaker<Exec>&, const RecomputeStaging<T>&);
//     static NormedUse normed_use(const SavedTensorMaker<Exec>&);   // block_layers.hpp
//     Module(BlockContext<Exec>&, bool trainable, MemoryUse&);
//     void forward(Layer, const BlockParams<T>&, const Mat& in, const Saved&, const Mat& out);
//     void backward(Layer, const BlockParams<T>&, const Mat& in, const Saved&, const Mat& d_out,
//                   const Mat& d_in, bool accumulate, ParameterUpdate<Exec>* sync);
//
// and a new module is a type in BlockModuleTypes, at its declaration's place.
//
//     BlockModules<Exec> modules(context, trainable, memory);
//     SavedActivations<Exec> s = BlockModules<Exec>::make_saved(make, true, staging);
//     modules.forward(params, s, out, block_layers().size());
//     modules.backward(params, s, dout, din, accumulate, sync);
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "model/activation_buffers.hpp"
#include "model/block_layers.hpp"
#include "model/memory_use.hpp"
#include "model/modules/attention_module.hpp"
#include "model/modules/block_context.hpp"
#include "model/modules/mlp.hpp"

namespace meshslice {

template <class Exec>
using BlockModuleTypes = std::tuple<AttentionModule<Exec>, MlpModule<Exec>>;

namespace block_modules_detail {

template <class Modules>
struct SavedSets;
template <class... Module>
struct SavedSets<std::tuple<Module...>> {
  using type = std::tuple<typename Module::Saved...>;
};

// f(std::integral_constant<std::size_t, I>()) for I = i, one of 0 ... N - 1.
template <class F, std::size_t... I>
void with_index(std::size_t i, F&& f, std::index_sequence<I...>) {
  ((i == I ? f(std::integral_constant<std::size_t, I>()) : void()), ...);
}
// f(std::integral_constant<std::size_t, I>()) for I = 0 ... N - 1 in turn.
template <class F, std::size_t... I>
void for_each_index(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>()), ...);
}

}  // namespace block_modules_detail

// What the backward pass needs of one block and micro-batch.
template <class Exec>
struct SavedActivations {
  static constexpr std::size_t kModules = std::tuple_size_v<BlockModuleTypes<Exec>>;
  // Each module's input: the block's input, then the residual stream each module hands on.
  std::array<Matrix<typename Exec::Scalar>, kModules> inputs;
  typename block_modules_detail::SavedSets<BlockModuleTypes<Exec>>::type modules;
  const Matrix<typename Exec::Scalar>& block_input() const { return inputs[0]; }
};

template <class Exec>
class BlockModules {
 public:
  using T = typename Exec::Scalar;
  using Mat = Matrix<T>;
  using Saved = SavedActivations<Exec>;
  static constexpr std::size_t kModules = Saved::kModules;

  BlockModules(BlockContext<Exec>& context, bool trainable, MemoryUse& memory)
      : modules_{make_modules(context, trainable, memory, Indices())} {
    MESHSLICE_ASSERT(block_modules().size() == kModules, "BlockModules: ", kModules,
                     " module types for ", block_modules().size(), " declarations");
    // The gradient of each stream between two modules (trainable).
    if (trainable)
      for (Mat& g : stream_grads_)
        g = activation_matrix(context.ex, context.shape.tokens(), Layout::standard,
                              context.shape.hidden, "grad_x_mid", memory.work);
  }

  // A block's saved set: its input's stream (unless `with_input` is false), then each module's
  // set and the stream it hands on. A recomputation's set (`staging` not null) keeps some
  // tensors in the forward pass's staging buffers: `normed` for a module whose tensor there no
  // later module overwrites (block_layers.hpp's normed_offers), `output` for the last module
  // (every earlier one writes it, and the recomputation stops before the last one's writes:
  // block_layers.hpp's recomputed_layers()).
  static Saved make_saved(SavedTensorMaker<Exec>& make, bool with_input,
                          const RecomputeStaging<T>& staging = {}) {
    const std::size_t H = make.shape().hidden;
    Saved s;
    std::vector<NormedUse> uses(kModules);
    block_modules_detail::for_each_index([&](auto m) { uses[m] = Module<m>::normed_use(make); },
                                         Indices());
    const std::vector<bool> normed_offered = normed_offers(uses);
    block_modules_detail::for_each_index(
        [&](auto m) {
          if (m > 0 || with_input)
            s.inputs[m] = make.activation(Layout::standard, H, m == 0 ? "x_in" : "x_mid");
          const RecomputeStaging<T> own{normed_offered[m] ? staging.normed : nullptr,
                                        m + 1 == kModules ? staging.output : nullptr};
          std::get<m>(s.modules) = Module<m>::make_saved(make, own);
        },
        Indices());
    return s;
  }

  // The block's first `layers` layers forward (all: to its output `out`; fewer, `out` unused: a
  // recomputation).
  void forward(const BlockParams<T>& w, const Saved& s, const Mat& out, std::size_t layers) {
    for (std::size_t i = 0; i < layers; ++i) {
      const BlockLayerSpec& layer = block_layers()[i];
      run(layer, [&](auto& block_module, auto m) {
        using Layer = typename std::decay_t<decltype(block_module)>::Layer;
        block_module.forward(Layer(layer.layer), w.from(first_parameter(m)), s.inputs[m],
                             std::get<m>(s.modules), m + 1 < kModules ? s.inputs[m + 1] : out);
      });
    }
  }

  // The block's layers in reverse: its output gradient is dout, its input gradient din;
  // `accumulate` adds the parameters' gradients to theirs, and `sync` (null: not the last
  // micro-batch) starts each one's dp averaging as soon as it is complete.
  void backward(const BlockParams<T>& w, const Saved& s, const Mat& dout, const Mat& din,
                bool accumulate, ParameterUpdate<Exec>* sync) {
    for (auto layer = block_layers().rbegin(); layer != block_layers().rend(); ++layer)
      run(*layer, [&](auto& block_module, auto m) {
        using Layer = typename std::decay_t<decltype(block_module)>::Layer;
        block_module.backward(Layer(layer->layer), w.from(first_parameter(m)), s.inputs[m],
                              std::get<m>(s.modules), m + 1 < kModules ? stream_grads_[m] : dout,
                              m > 0 ? stream_grads_[m - 1] : din, accumulate, sync);
      });
  }

 private:
  using Indices = std::make_index_sequence<kModules>;
  template <std::size_t M>
  using Module = std::tuple_element_t<M, BlockModuleTypes<Exec>>;

  // f(module, its index) for the module that runs `layer`.
  template <class F>
  void run(const BlockLayerSpec& layer, F&& f) {
    block_modules_detail::with_index(
        layer.module, [&](auto m) { f(std::get<m>(modules_), m); }, Indices());
  }
  // The modules, constructed in order (a braced list's elements are).
  template <std::size_t... M>
  static BlockModuleTypes<Exec> make_modules(BlockContext<Exec>& context, bool trainable,
                                             MemoryUse& memory, std::index_sequence<M...>) {
    return BlockModuleTypes<Exec>{Module<M>(context, trainable, memory)...};
  }

  BlockModuleTypes<Exec> modules_;
  std::array<Mat, kModules - 1> stream_grads_;  // d(module m's output), m < the last
};

}  // namespace meshslice
