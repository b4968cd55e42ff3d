// Implementation of comm/collectives.hpp and comm/partial_collectives.hpp. Every collective
// reduces to the same recipe:
//   1. move the shard into a contiguous buffer laid out as P blocks (a no-op for row gathers),
//   2. hand MPI either one native non-blocking collective or the ring's step list,
//   3. on completion copy/unpack into the output.
// Staging through host mirrors (MpiBuffer) is what keeps this correct on a GPU without a
// GPU-aware MPI; on host memory it costs nothing.
#include "comm/collectives.hpp"

#include <memory>

#include "comm/buffers.hpp"
#include "comm/partial_collectives.hpp"
#include "comm/recorded_op.hpp"
#include "comm/ring_schedules.hpp"
#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "core/stream_copy.hpp"

namespace meshslice {

namespace {

std::string shape_str(std::size_t rows, std::size_t cols) { return concat(rows, "x", cols); }

template <class V>
std::string shape_of(const V& m) {
  return shape_str(m.extent(0), m.extent(1));
}

// `big` must be `small` stacked P times along `dim` (the gathered/unscattered shape).
template <class T, class Space>
void check_stacked(const char* op, const AxisComm& ring, const Matrix<T, Space>& small,
                   const Matrix<T, Space>& big, MatrixDim dim, const char* small_name,
                   const char* big_name) {
  const std::size_t p = ring.size();
  const bool rows = dim == MatrixDim::rows;
  const std::size_t want_rows = small.extent(0) * (rows ? p : 1);
  const std::size_t want_cols = small.extent(1) * (rows ? 1 : p);
  require(big.extent(0) == want_rows && big.extent(1) == want_cols, op, " along ", dim_name(dim),
          " on the '", ring.name(), "' ring of ", p, " ranks: the ", big_name, " is ",
          shape_of(big), " but must be ", shape_str(want_rows, want_cols), " (", p, " stacked ",
          small_name, "s of ", shape_of(small),
          "); the gathered dimension must be divisible by the ring size ", p);
}

template <class T, class Space>
void check_same_shape(const char* op, const Matrix<T, Space>& a, const Matrix<T, Space>& b) {
  require(a.extent(0) == b.extent(0) && a.extent(1) == b.extent(1), op,
          ": input and output must have the same shape, got ", shape_of(a), " and ", shape_of(b));
}

void check_root(const char* op, const AxisComm& ring, int root) {
  require(root >= 0 && root < ring.size(), op, ": root ", root, " is outside the '", ring.name(),
          "' ring of ", ring.size(), " ranks (valid roots: 0..", ring.size() - 1, ")");
}

template <class T>
RingContext<T> ring_context(const AxisComm& ring) {
  return RingContext<T>{ring, ring.next_tag()};
}

// Elements in one packet of the ring's pipelined messages (CommOptions::packet_bytes).
std::size_t packet_elements(const CommOptions& options, std::size_t element_bytes) {
  return std::max<std::size_t>(1, options.packet_bytes / element_bytes);
}

// The receive buffer of the ring reduce-scatter (chunks of up to n elements) and of the ring
// reduce (a buffer of n): one packet, which packets_of never exceeds.
std::size_t received_elements(std::size_t n, const CommOptions& options,
                              std::size_t element_bytes) {
  return std::min(n, packet_elements(options, element_bytes));
}

template <class T>
std::vector<Chunk> packets_of(std::size_t n, const CommOptions& options) {
  const std::size_t per_packet = packet_elements(options, sizeof(T));
  const std::size_t count = std::max<std::size_t>(1, (n + per_packet - 1) / per_packet);
  return balanced_chunks(static_cast<int>(count), n);
}

// MPI reads a caller's buffer as soon as the collective starts: kernels still writing it on the
// space's default instance finish first. (Executors fence their own instances before calling.)
template <class Space>
void fence_before_mpi(const char* label) {
  fence(SpaceExec<Space>(), label);
}

// The collective's own kernels are done before MPI (or the caller) reads what they wrote.
template <class Space>
void fence_kernels(const SpaceExec<Space>& space) {
  fence(space, "meshslice::collective_kernels");
}

// Whether MPI moves a reduction's data (and so writes the host mirrors of a staged one): only
// with more than one rank. A ring of one (a 1 x N mesh's rows, dp 1) copies on the device,
// native or not: MPI's non-blocking reduce-scatter copies its input through a temporary buffer
// it allocates per call, and the LM head's 64 MiB of logits took 23 ms a step that way, most
// of it faulting the fresh pages in.
bool reduced_through_mpi(int parts) { return parts > 1; }

Request make_request(const CommOpInfo& op, std::vector<CommStep> steps,
                     std::function<void()> on_complete) {
  return Request(std::make_unique<StepEngine>(std::move(steps), std::move(on_complete), op));
}

}  // namespace

template <class T, class Space>
Request iall_gather_produced(const AxisComm& ring, std::size_t rows, std::size_t cols,
                             const std::function<void(const Matrix<T, Space>&)>& produce,
                             const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options,
                             const CommScratch<T, Space>& scratch) {
  const Matrix<T, Space> shape_only(nullptr, rows, cols);
  check_stacked("all_gather", ring, shape_only, out, dim, "local shard", "output");
  ScratchCarver<T, Space> carve(scratch);
  const int parts = ring.size();
  const std::size_t n = rows * cols;
  const std::size_t mine = ring.rank() * n;
  // Row blocks of `out` are already the P contiguous blocks, and so is a single column block;
  // column blocks of several ranks need a buffer.
  const bool in_place_blocks = dim == MatrixDim::rows || parts == 1;
  const Buffer<T, Space> blocks =
      in_place_blocks ? flat(out) : carve.device(parts * n, "all_gather_blocks");
  produce(Matrix<T, Space>(blocks.data() + mine, rows, cols));
  fence_kernels<Space>(scratch.space);
  const MpiBuffer<T, Space> mpi(blocks, mpi_staged<Space>(options), carve);
  mpi.push(mine, n);

  std::vector<CommStep> steps;
  if (options.impl == CollectiveImpl::native) {
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Iallgather(MPI_IN_PLACE, 0, mpi_datatype<T>(), mpi.data(), mpi_count(n),
                                      mpi_datatype<T>(), comm, &reqs.back());
                     },
                     {}});
  } else {
    append_ring_all_gather(steps, ring_context<T>(ring), mpi.data(), equal_blocks(parts, n));
  }
  return make_request(ring_op(CommKind::all_gather, ring, n, sizeof(T)), std::move(steps),
                      [=, keep = out, space = scratch.space] {
                        mpi.queue_pull_all();
                        if (!in_place_blocks) unpack_col_blocks(blocks, parts, keep, space);
                        fence_kernels<Space>(space);
                      });
}

template <class T, class Space>
Request iall_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                    const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options,
                    const CommScratch<T, Space>& scratch) {
  return iall_gather_produced<T, Space>(
      ring, local.extent(0), local.extent(1),
      [&](const Matrix<T, Space>& block) {
        if (block.data() != local.data()) large_copy(scratch.space, block, local);
      },
      out, dim, options, scratch);
}

ScratchNeed all_gather_scratch(int parts, std::size_t n, MatrixDim dim, bool staged) {
  const std::size_t all = parts * n;
  return {dim == MatrixDim::cols && parts > 1 ? all : 0, staged ? all : 0};
}

// The partial collectives of comm/partial_collectives.hpp.

namespace {

// The all-gather of sub-shard `slice` of `local`, which slice(local, block) cuts straight into
// its block of the gather buffer (of `out`'s element type).
template <class T, class Out, class Space, class Slice>
Request partial_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                       const Matrix<Out, Space>& out, MatrixDim dim, const SliceSpec& slice,
                       const CommOptions& options, const CommScratch<Out, Space>& scratch,
                       Slice&& slice_into_block) {
  const bool cols = dim == MatrixDim::cols;
  check_slice(cols ? local.extent(1) : local.extent(0), dim, slice, "shard");
  const std::size_t rows = cols ? local.extent(0) : local.extent(0) / slice.count;
  const std::size_t width = cols ? local.extent(1) / slice.count : local.extent(1);
  return iall_gather_produced<Out, Space>(ring, rows, width, slice_into_block, out, dim, options,
                                          scratch);
}

}  // namespace

template <class T, class Space>
Request ipartial_all_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                            const Matrix<T, Space>& out, MatrixDim dim, const SliceSpec& slice,
                            const CommOptions& options, const CommScratch<T, Space>& scratch) {
  return partial_gather(ring, local, out, dim, slice, options, scratch,
                        [&](const Matrix<T, Space>& block) {
                          slice_into(local, block, dim, slice, scratch.space);
                        });
}

template <class Space>
Request ipartial_all_gather_rounded(const AxisComm& ring, const Matrix<float, Space>& local,
                                    const Matrix<bfloat16, Space>& out, MatrixDim dim,
                                    const SliceSpec& slice, const CommOptions& options,
                                    const CommScratch<bfloat16, Space>& scratch) {
  return partial_gather(ring, local, out, dim, slice, options, scratch,
                        [&](const Matrix<bfloat16, Space>& block) {
                          slice_rounded_into(local, block, dim, slice, scratch.space);
                        });
}

namespace {

template <class T, class Space>
Request reduce_scatter_carved(const AxisComm& ring, const Matrix<T, Space>& in,
                              const Matrix<T, Space>& out, MatrixDim dim,
                              const CommOptions& options, ScratchCarver<T, Space>& carve) {
  const SpaceExec<Space>& space = carve.space();
  check_stacked("reduce_scatter", ring, out, in, dim, "output shard", "input");
  const int parts = ring.size();
  const std::size_t n = elements(out);
  const bool native = options.impl == CollectiveImpl::native;
  const bool staged = mpi_staged<Space>(options);
  // Blocks along columns are packed into contiguous ones first; rows (or a single column
  // block) are already blocked.
  Buffer<T, Space> blocks = flat(in);
  if (dim == MatrixDim::cols && parts > 1) {
    blocks = carve.device(parts * n, "reduce_scatter_blocks");
    pack_col_blocks(in, parts, blocks, space);
    fence_kernels<Space>(space);
  }
  // Without MPI (a ring of one rank) the output must not be pulled from an unwritten mirror.
  const bool through_mpi = reduced_through_mpi(parts);
  const MpiBuffer<T, Space> mpi(blocks, staged, carve);
  if (through_mpi) mpi.push_all();
  const MpiBuffer<T, Space> result(flat(out), staged, carve);

  std::vector<CommStep> steps;
  Buffer<T, Space> partial, received;
  MpiBuffer<T, Space> mpi_partial, mpi_received;
  if (!through_mpi) {
    copy_range(flat(out), 0, blocks, 0, n, space);
    fence_kernels<Space>(space);
  } else if (native) {
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Ireduce_scatter_block(mpi.data(), result.data(), mpi_count(n),
                                                 mpi_datatype<T>(), MPI_SUM, comm, &reqs.back());
                     },
                     {}});
  } else {
    // The ring reads the blocks without modifying them: no working copy of the input.
    partial = carve.device(ring_partial_elements(parts, n), "reduce_scatter_partial");
    received = carve.device(received_elements(n, options, sizeof(T)), "reduce_scatter_received");
    mpi_partial = MpiBuffer<T, Space>(partial, staged, carve);
    mpi_received = MpiBuffer<T, Space>(received, staged, carve);
    append_ring_reduce_scatter_into(steps, ring_context<T>(ring), mpi.data(),
                                    equal_blocks(parts, n), mpi_partial.data(), mpi_received.data(),
                                    result.data(), mpi.sum(), packet_elements(options, sizeof(T)));
  }
  // The captured views keep the input (read in place by MPI), the output, the scratch and the
  // host mirrors (allocated here when no scratch was given; the steps hold raw pointers) alive.
  return make_request(ring_op(CommKind::reduce_scatter, ring, parts * n, sizeof(T)),
                      std::move(steps), [=, keep = std::make_pair(in, out)] {
                        if (through_mpi) result.pull_all();
                        (void)blocks;
                        (void)partial;
                        (void)received;
                        (void)mpi;
                        (void)mpi_partial;
                        (void)mpi_received;
                        (void)keep;
                      });
}

}  // namespace

template <class T, class Space>
Request ireduce_scatter(const AxisComm& ring, const Matrix<T, Space>& in,
                        const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options,
                        const CommScratch<T, Space>& scratch) {
  ScratchCarver<T, Space> carve(scratch);
  return reduce_scatter_carved(ring, in, out, dim, options, carve);
}

ScratchNeed reduce_scatter_scratch(int parts, std::size_t n, MatrixDim dim,
                                   const CommOptions& options, bool staged,
                                   std::size_t element_bytes) {
  const bool ring = options.impl == CollectiveImpl::ring && parts > 1;
  const std::size_t all = parts * n;
  const std::size_t ring_buffers =
      ring ? ring_partial_elements(parts, n) + received_elements(n, options, element_bytes) : 0;
  ScratchNeed need;
  if (dim == MatrixDim::cols && parts > 1) need.device += all;  // packed blocks
  need.device += ring_buffers;                                  // partial, received
  if (staged) need.host += all + n + ring_buffers;              // blocks, result, ring's
  return need;
}

template <class T, class Space>
Request ipartial_reduce_scatter(const AxisComm& ring, const Matrix<T, Space>& contribution,
                                const Matrix<T, Space>& shard, MatrixDim dim,
                                const SliceSpec& slice, const CommOptions& options, double beta,
                                const CommScratch<T, Space>& scratch) {
  const bool cols = dim == MatrixDim::cols;
  check_slice(cols ? shard.extent(1) : shard.extent(0), dim, slice, "shard");
  const std::size_t rows = cols ? shard.extent(0) : shard.extent(0) / slice.count;
  const std::size_t width = cols ? shard.extent(1) / slice.count : shard.extent(1);
  if (ring.size() == 1) {
    // The sum over one rank is the contribution: unsliced into the shard as it is, not copied
    // into a sub-shard first (a 1 x N mesh's weight gradients, whose row ring has one rank).
    check_stacked("reduce_scatter", ring, Matrix<T, Space>(nullptr, rows, width), contribution, dim,
                  "output shard", "input");
    unslice_into(contribution, shard, dim, slice, static_cast<T>(beta), scratch.space);
    fence_kernels<Space>(scratch.space);
    return make_request(ring_op(CommKind::reduce_scatter, ring, rows * width, sizeof(T)), {},
                        [] {});
  }
  ScratchCarver<T, Space> carve(scratch);
  // `memory` owns the sub-shard when the carver allocated it: the request keeps it alive.
  const Buffer<T, Space> memory = carve.device(rows * width, "partial_reduce_scatter_sub");
  const Matrix<T, Space> sub(memory.data(), rows, width);
  Request request = reduce_scatter_carved(ring, contribution, sub, dim, options, carve);
  request.and_then([=, space = scratch.space] {
    unslice_into(sub, shard, dim, slice, static_cast<T>(beta), space);
    fence_kernels<Space>(space);
    (void)memory;
  });
  return request;
}

ScratchNeed partial_reduce_scatter_scratch(int parts, std::size_t n, MatrixDim dim,
                                           const CommOptions& options, bool staged,
                                           std::size_t element_bytes) {
  if (parts == 1) return {};  // unsliced from the contribution itself
  ScratchNeed need{n, 0};
  need += reduce_scatter_scratch(parts, n, dim, options, staged, element_bytes);
  return need;
}

template <class T, class Space>
Request iall_reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                    const CommOptions& options, const CommScratch<T, Space>& scratch) {
  check_same_shape("all_reduce", in, out);
  ScratchCarver<T, Space> carve(scratch);
  const bool staged = mpi_staged<Space>(options);
  const bool native = options.impl == CollectiveImpl::native;
  const int parts = ring.size();
  const std::size_t n = elements(out);
  const bool through_mpi = reduced_through_mpi(parts);  // else no mirror to pull
  // Native MPI reduces in place in the output, and a ring of one's sum is the copy; the ring
  // reads the input where it is (in may be out) and writes only the output, so it needs no copy.
  if (native || !through_mpi) {
    copy_range(flat(out), 0, flat(in), 0, n, scratch.space);
    fence_kernels<Space>(scratch.space);
  }
  const MpiBuffer<T, Space> mpi(flat(out), staged, carve);
  std::vector<CommStep> steps;
  Buffer<T, Space> partial, received;
  MpiBuffer<T, Space> mpi_in, mpi_partial, mpi_received;
  if (through_mpi && native) {
    mpi.push_all();
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Iallreduce(MPI_IN_PLACE, mpi.data(), mpi_count(n), mpi_datatype<T>(),
                                      MPI_SUM, comm, &reqs.back());
                     },
                     {}});
  } else if (through_mpi) {
    // Ring all-reduce = reduce-scatter then all-gather of P balanced chunks (bandwidth optimal):
    // the reduce-scatter leaves this rank's summed chunk in the output, the all-gather the rest.
    const auto chunks = balanced_chunks(parts, n);
    mpi_in = MpiBuffer<T, Space>(flat(in), staged, carve);
    mpi_in.push_all();
    partial =
        carve.device(ring_partial_elements(parts, chunks.front().length), "all_reduce_partial");
    received = carve.device(received_elements(chunks.front().length, options, sizeof(T)),
                            "all_reduce_received");
    mpi_partial = MpiBuffer<T, Space>(partial, staged, carve);
    mpi_received = MpiBuffer<T, Space>(received, staged, carve);
    const auto ctx = ring_context<T>(ring);
    append_ring_reduce_scatter_into(steps, ctx, mpi_in.data(), chunks, mpi_partial.data(),
                                    mpi_received.data(), mpi.data() + chunks[ring.rank()].offset,
                                    mpi_in.sum(), packet_elements(options, sizeof(T)));
    append_ring_all_gather(steps, ctx, mpi.data(), chunks);
  }
  // The host mirrors stay alive with the request: the ring's steps hold raw pointers into them.
  return make_request(ring_op(CommKind::all_reduce, ring, n, sizeof(T)), std::move(steps),
                      [=, keep = std::make_pair(in, out)] {
                        if (through_mpi) mpi.pull_all();
                        (void)partial;
                        (void)received;
                        (void)mpi_in;
                        (void)mpi_partial;
                        (void)mpi_received;
                        (void)keep;
                      });
}

ScratchNeed all_reduce_scratch(int parts, std::size_t n, const CommOptions& options, bool staged,
                               std::size_t element_bytes) {
  const bool ring = options.impl == CollectiveImpl::ring && parts > 1;
  const std::size_t chunk = (n + parts - 1) / parts;
  const std::size_t ring_buffers =  // partial, received
      ring ? ring_partial_elements(parts, chunk) + received_elements(chunk, options, element_bytes)
           : 0;
  ScratchNeed need{ring_buffers, 0};
  if (staged) need.host = n + (ring ? n + ring_buffers : 0);  // output, input, ring's
  return need;
}

template <class T, class Space>
Request ibroadcast(const AxisComm& ring, const Matrix<T, Space>& buffer, int root,
                   const CommOptions& options, const CommScratch<T, Space>& scratch) {
  check_root("broadcast", ring, root);
  ScratchCarver<T, Space> carve(scratch);
  const std::size_t n = elements(buffer);
  fence_before_mpi<Space>("meshslice::broadcast");
  const MpiBuffer<T, Space> mpi(flat(buffer), mpi_staged<Space>(options), carve);
  if (ring.rank() == root) mpi.push_all();

  std::vector<CommStep> steps;
  if (options.impl == CollectiveImpl::native) {
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Ibcast(mpi.data(), mpi_count(n), mpi_datatype<T>(), root, comm,
                                  &reqs.back());
                     },
                     {}});
  } else {
    append_ring_broadcast(steps, ring_context<T>(ring), mpi.data(), packets_of<T>(n, options),
                          root);
  }
  const bool receives = ring.rank() != root;
  return make_request(ring_op(CommKind::broadcast, ring, n, sizeof(T)), std::move(steps),
                      [=, keep = buffer] {
                        if (receives) mpi.pull_all();
                        (void)keep;
                      });
}

ScratchNeed broadcast_scratch(std::size_t n, bool staged) { return {0, staged ? n : 0}; }

template <class T, class Space>
Request ireduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                int root, const CommOptions& options, const CommScratch<T, Space>& scratch) {
  check_root("reduce", ring, root);
  check_same_shape("reduce", in, out);
  ScratchCarver<T, Space> carve(scratch);
  const bool staged = mpi_staged<Space>(options);
  const std::size_t n = elements(in);
  const bool is_root = ring.rank() == root;
  std::vector<CommStep> steps;

  if (options.impl == CollectiveImpl::native) {
    fence_before_mpi<Space>("meshslice::reduce");
    const MpiBuffer<T, Space> send(flat(in), staged, carve);
    const MpiBuffer<T, Space> result(flat(out), staged, carve);
    send.push_all();
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Ireduce(send.data(), is_root ? result.data() : nullptr, mpi_count(n),
                                   mpi_datatype<T>(), MPI_SUM, root, comm, &reqs.back());
                     },
                     {}});
    return make_request(ring_op(CommKind::reduce, ring, n, sizeof(T)), std::move(steps),
                        [=, keep = std::make_pair(in, out)] {
                          if (is_root) result.pull_all();
                          (void)keep;
                        });
  }
  // Ring: partial sums accumulate in the output at the root and in a copy elsewhere, so the
  // input is never modified and non-root outputs stay untouched.
  const Buffer<T, Space> accumulator = is_root ? flat(out) : carve.device(n, "reduce_accumulator");
  copy_range(accumulator, 0, flat(in), 0, n, scratch.space);
  const auto received = carve.device(received_elements(n, options, sizeof(T)), "reduce_received");
  fence_kernels<Space>(scratch.space);
  const MpiBuffer<T, Space> mpi(accumulator, staged, carve);
  const MpiBuffer<T, Space> mpi_received(received, staged, carve);
  mpi.push_all();
  append_ring_reduce(steps, ring_context<T>(ring), mpi.data(), packets_of<T>(n, options),
                     mpi_received.data(), mpi.sum(), root);
  return make_request(
      ring_op(CommKind::reduce, ring, n, sizeof(T)), std::move(steps), [=, keep = out] {
        if (is_root) mpi.pull_all();
        (void)received;
        (void)mpi_received;  // the ring's steps hold a raw pointer into its host mirror
        (void)keep;
      });
}

ScratchNeed reduce_scratch(std::size_t n, const CommOptions& options, bool staged,
                           std::size_t element_bytes) {
  if (options.impl == CollectiveImpl::native) return {0, staged ? 2 * n : 0};  // send, result
  // The accumulator and one received packet (packets_of cuts at most packet_elements).
  const std::size_t ring_buffers = n + received_elements(n, options, element_bytes);
  return {ring_buffers, staged ? ring_buffers : 0};
}

namespace {

// One Isend and/or Irecv: the whole of a shift, a send or a receive.
template <class T, class Space>
Request point_to_point(const CommOpInfo& op, const AxisComm& axis, int tag,
                       const Matrix<T, Space>* in, int dest, const Matrix<T, Space>* out,
                       int source, const CommOptions& options,
                       const CommScratch<T, Space>& scratch) {
  ScratchCarver<T, Space> carve(scratch);
  const bool staged = mpi_staged<Space>(options);
  fence_before_mpi<Space>("meshslice::point_to_point");
  MpiBuffer<T, Space> send, recv;
  if (in) {
    send = MpiBuffer<T, Space>(flat(*in), staged, carve);
    send.push_all();
  }
  if (out) recv = MpiBuffer<T, Space>(flat(*out), staged, carve);
  const RingContext<T> ctx{axis, tag};
  const bool sends = in != nullptr, receives = out != nullptr;
  const std::size_t n_in = sends ? in->size() : 0, n_out = receives ? out->size() : 0;
  std::vector<CommStep> steps;
  steps.push_back({[=](std::vector<MPI_Request>& reqs) {
                     if (receives) ctx.irecv(recv.data(), n_out, source, reqs);
                     if (sends) ctx.isend(send.data(), n_in, dest, reqs);
                   },
                   {}});
  // The captured views keep the buffers MPI reads and writes alive until completion.
  const Matrix<T, Space> keep_in = sends ? *in : Matrix<T, Space>();
  const Matrix<T, Space> keep_out = receives ? *out : Matrix<T, Space>();
  return make_request(op, std::move(steps), [=] {
    if (receives) recv.pull_all();
    (void)keep_in;
    (void)keep_out;
  });
}

}  // namespace

template <class T, class Space>
Request ishift(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
               int displacement, const CommOptions& options, const CommScratch<T, Space>& scratch) {
  check_same_shape("shift", in, out);
  require(in.data() != out.data(), "shift: input and output must be different buffers");
  // A shift is point-to-point in either implementation: one Isend/Irecv pair on the ring.
  const int dest = ring.neighbour(displacement);
  return point_to_point(ring_op(CommKind::shift, ring, elements(in), sizeof(T), dest), ring,
                        ring.next_tag(), &in, dest, &out, ring.neighbour(-displacement), options,
                        scratch);
}

ScratchNeed shift_scratch(std::size_t n, bool staged) { return {0, staged ? 2 * n : 0}; }

namespace {

int stage_peer(const char* op, const AxisComm& axis, int displacement) {
  const int peer = axis.rank() + displacement;
  require(displacement != 0 && peer >= 0 && peer < axis.size(), op, " on the '", axis.name(),
          "' axis from position ", axis.rank(), " by ", displacement, ": there is no position ",
          peer, " (the axis has ", axis.size(), " positions and does not wrap around)");
  return peer;
}

int channel_tag(int channel) {
  require(channel >= 0 && channel < AxisComm::kPointToPointChannels, "point-to-point channel ",
          channel, " outside 0..", AxisComm::kPointToPointChannels - 1);
  return AxisComm::kPointToPointTag + channel;
}

}  // namespace

template <class T, class Space>
Request isend(const AxisComm& axis, const Matrix<T, Space>& buffer, int displacement, int channel,
              const CommOptions& options, const CommScratch<T, Space>& scratch) {
  const int dest = stage_peer("send", axis, displacement);
  return point_to_point<T, Space>(ring_op(CommKind::send, axis, elements(buffer), sizeof(T), dest),
                                  axis, channel_tag(channel), &buffer, dest, nullptr, -1, options,
                                  scratch);
}

template <class T, class Space>
Request irecv(const AxisComm& axis, const Matrix<T, Space>& buffer, int displacement, int channel,
              const CommOptions& options, const CommScratch<T, Space>& scratch) {
  const int source = stage_peer("receive", axis, displacement);
  return point_to_point<T, Space>(
      ring_op(CommKind::recv, axis, elements(buffer), sizeof(T), source), axis,
      channel_tag(channel), nullptr, -1, &buffer, source, options, scratch);
}

ScratchNeed point_to_point_scratch(std::size_t n, bool staged) { return {0, staged ? n : 0}; }

#define MESHSLICE_INSTANTIATE_COLLECTIVES(T, Space)                                              \
  template Request iall_gather_produced<T, Space>(                                               \
      const AxisComm&, std::size_t, std::size_t,                                                 \
      const std::function<void(const Matrix<T, Space>&)>&, const Matrix<T, Space>&, MatrixDim,   \
      const CommOptions&, const CommScratch<T, Space>&);                                         \
  template Request iall_gather<T, Space>(const AxisComm&, const Matrix<T, Space>&,               \
                                         const Matrix<T, Space>&, MatrixDim, const CommOptions&, \
                                         const CommScratch<T, Space>&);                          \
  template Request ireduce_scatter<T, Space>(const AxisComm&, const Matrix<T, Space>&,           \
                                             const Matrix<T, Space>&, MatrixDim,                 \
                                             const CommOptions&, const CommScratch<T, Space>&);  \
  template Request ipartial_all_gather<T, Space>(                                                \
      const AxisComm&, const Matrix<T, Space>&, const Matrix<T, Space>&, MatrixDim,              \
      const SliceSpec&, const CommOptions&, const CommScratch<T, Space>&);                       \
  template Request ipartial_reduce_scatter<T, Space>(                                            \
      const AxisComm&, const Matrix<T, Space>&, const Matrix<T, Space>&, MatrixDim,              \
      const SliceSpec&, const CommOptions&, double, const CommScratch<T, Space>&);               \
  template Request iall_reduce<T, Space>(const AxisComm&, const Matrix<T, Space>&,               \
                                         const Matrix<T, Space>&, const CommOptions&,            \
                                         const CommScratch<T, Space>&);                          \
  template Request ibroadcast<T, Space>(const AxisComm&, const Matrix<T, Space>&, int,           \
                                        const CommOptions&, const CommScratch<T, Space>&);       \
  template Request ireduce<T, Space>(const AxisComm&, const Matrix<T, Space>&,                   \
                                     const Matrix<T, Space>&, int, const CommOptions&,           \
                                     const CommScratch<T, Space>&);                              \
  template Request ishift<T, Space>(const AxisComm&, const Matrix<T, Space>&,                    \
                                    const Matrix<T, Space>&, int, const CommOptions&,            \
                                    const CommScratch<T, Space>&);                               \
  template Request isend<T, Space>(const AxisComm&, const Matrix<T, Space>&, int, int,           \
                                   const CommOptions&, const CommScratch<T, Space>&);            \
  template Request irecv<T, Space>(const AxisComm&, const Matrix<T, Space>&, int, int,           \
                                   const CommOptions&, const CommScratch<T, Space>&);

MESHSLICE_INSTANTIATE_COLLECTIVES(float, MemSpace)
MESHSLICE_INSTANTIATE_COLLECTIVES(double, MemSpace)
template Request ipartial_all_gather<bfloat16, MemSpace>(
    const AxisComm&, const Matrix<bfloat16, MemSpace>&, const Matrix<bfloat16, MemSpace>&,
    MatrixDim, const SliceSpec&, const CommOptions&, const CommScratch<bfloat16, MemSpace>&);
template Request ipartial_all_gather_rounded<MemSpace>(const AxisComm&,
                                                       const Matrix<float, MemSpace>&,
                                                       const Matrix<bfloat16, MemSpace>&, MatrixDim,
                                                       const SliceSpec&, const CommOptions&,
                                                       const CommScratch<bfloat16, MemSpace>&);

}  // namespace meshslice
