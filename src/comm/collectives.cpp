// Implementation of comm/collectives.hpp. Every collective reduces to the same recipe:
//   1. move the shard into a contiguous buffer laid out as P blocks (a no-op for row gathers),
//   2. hand MPI either one native non-blocking collective or the ring's step list,
//   3. on completion copy/unpack into the output.
// Staging through host mirrors (MpiBuffer) is what keeps this correct on a GPU without a
// GPU-aware MPI; on host memory it costs nothing.
#include "comm/collectives.hpp"

#include <memory>

#include "comm/buffers.hpp"
#include "comm/ring_schedules.hpp"
#include "core/errors.hpp"

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
          shape_of(big), " but must be ", shape_str(want_rows, want_cols), " (", p,
          " stacked ", small_name, "s of ", shape_of(small),
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

template <class T>
std::vector<Chunk> packets_of(std::size_t n, const CommOptions& options) {
  const std::size_t per_packet = std::max<std::size_t>(1, options.packet_bytes / sizeof(T));
  const std::size_t count = std::max<std::size_t>(1, (n + per_packet - 1) / per_packet);
  return balanced_chunks(static_cast<int>(count), n);
}

Request make_request(std::vector<CommStep> steps, std::function<void()> on_complete) {
  return Request(std::make_unique<StepEngine>(std::move(steps), std::move(on_complete)));
}

}  // namespace

template <class T, class Space>
Request iall_gather_produced(const AxisComm& ring, std::size_t rows, std::size_t cols,
                             const std::function<void(const Matrix<T, Space>&)>& produce,
                             const Matrix<T, Space>& out, MatrixDim dim,
                             const CommOptions& options) {
  const Matrix<T, Space> shape_only(nullptr, rows, cols);
  check_stacked("all_gather", ring, shape_only, out, dim, "local shard", "output");
  const int parts = ring.size();
  const std::size_t n = rows * cols;
  const std::size_t mine = ring.rank() * n;
  // Row blocks of `out` are already the P contiguous blocks; column blocks need a buffer.
  const bool in_place_blocks = dim == MatrixDim::rows;
  const Buffer<T, Space> blocks =
      in_place_blocks ? flat(out) : scratch_buffer<T, Space>("all_gather_blocks", parts * n);
  produce(Matrix<T, Space>(blocks.data() + mine, rows, cols));
  SpaceExec<Space>().fence();
  const MpiBuffer<T, Space> mpi(blocks, options.gpu_aware_mpi);
  mpi.push(mine, n);

  std::vector<CommStep> steps;
  if (options.impl == CollectiveImpl::native) {
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Iallgather(MPI_IN_PLACE, 0, mpi_datatype<T>(), mpi.data(),
                                      mpi_count(n), mpi_datatype<T>(), comm, &reqs.back());
                     },
                     {}});
  } else {
    append_ring_all_gather(steps, ring_context<T>(ring), mpi.data(), equal_blocks(parts, n));
  }
  return make_request(std::move(steps), [=, keep = out] {
    mpi.pull_all();
    if (!in_place_blocks) unpack_col_blocks(blocks, parts, keep);
    SpaceExec<Space>().fence();
  });
}

template <class T, class Space>
Request iall_gather(const AxisComm& ring, const Matrix<T, Space>& local,
                    const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options) {
  return iall_gather_produced<T, Space>(
      ring, local.extent(0), local.extent(1),
      [&](const Matrix<T, Space>& block) {
        if (block.data() != local.data()) Kokkos::deep_copy(block, local);
      },
      out, dim, options);
}

template <class T, class Space>
Request ireduce_scatter(const AxisComm& ring, const Matrix<T, Space>& in,
                        const Matrix<T, Space>& out, MatrixDim dim, const CommOptions& options) {
  check_stacked("reduce_scatter", ring, out, in, dim, "output shard", "input");
  const int parts = ring.size();
  const std::size_t n = out.size();
  const std::size_t mine = ring.rank() * n;
  const bool native = options.impl == CollectiveImpl::native;
  // The ring adds into its input blocks, so it always works on a copy; native MPI reads the
  // input in place when it is already blocked (rows).
  Buffer<T, Space> blocks;
  if (dim == MatrixDim::cols) {
    blocks = scratch_buffer<T, Space>("reduce_scatter_blocks", parts * n);
    pack_col_blocks(in, parts, blocks);
  } else if (native) {
    blocks = flat(in);
  } else {
    blocks = scratch_buffer<T, Space>("reduce_scatter_blocks", parts * n);
    Kokkos::deep_copy(blocks, flat(in));
  }
  SpaceExec<Space>().fence();
  const MpiBuffer<T, Space> mpi(blocks, options.gpu_aware_mpi);
  mpi.push_all();

  std::vector<CommStep> steps;
  if (native) {
    const MpiBuffer<T, Space> result(flat(out), options.gpu_aware_mpi);
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Ireduce_scatter_block(mpi.data(), result.data(), mpi_count(n),
                                                 mpi_datatype<T>(), MPI_SUM, comm, &reqs.back());
                     },
                     {}});
    // The captured views keep the input (read in place by MPI) and output alive until done.
    return make_request(std::move(steps), [=, keep = std::make_pair(in, out)] {
      result.pull_all();
      (void)blocks;
      (void)keep;
    });
  }
  const auto scratch = scratch_buffer<T, Space>("reduce_scatter_scratch", n);
  const MpiBuffer<T, Space> mpi_scratch(scratch, options.gpu_aware_mpi);
  append_ring_reduce_scatter(steps, ring_context<T>(ring), mpi.data(), equal_blocks(parts, n),
                             mpi_scratch.data(), mpi.accumulate());
  return make_request(std::move(steps), [=] {
    mpi.pull(mine, n);
    copy_range(flat(out), 0, blocks, mine, n);
    (void)scratch;  // captured: MPI receives into it
    SpaceExec<Space>().fence();
  });
}

template <class T, class Space>
Request iall_reduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                    const CommOptions& options) {
  check_same_shape("all_reduce", in, out);
  const std::size_t n = out.size();
  const Buffer<T, Space> buffer = flat(out);
  copy_range(buffer, 0, flat(in), 0, n);
  const MpiBuffer<T, Space> mpi(buffer, options.gpu_aware_mpi);
  mpi.push_all();

  std::vector<CommStep> steps;
  Buffer<T, Space> scratch;
  if (options.impl == CollectiveImpl::native) {
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Iallreduce(MPI_IN_PLACE, mpi.data(), mpi_count(n), mpi_datatype<T>(),
                                      MPI_SUM, comm, &reqs.back());
                     },
                     {}});
  } else {
    // Ring all-reduce = reduce-scatter then all-gather of P balanced chunks (bandwidth optimal).
    const auto chunks = balanced_chunks(ring.size(), n);
    scratch = scratch_buffer<T, Space>("all_reduce_scratch", chunks.front().length);
    const MpiBuffer<T, Space> mpi_scratch(scratch, options.gpu_aware_mpi);
    const auto ctx = ring_context<T>(ring);
    append_ring_reduce_scatter(steps, ctx, mpi.data(), chunks, mpi_scratch.data(),
                               mpi.accumulate());
    append_ring_all_gather(steps, ctx, mpi.data(), chunks);
  }
  return make_request(std::move(steps), [=, keep = out] {
    mpi.pull_all();
    (void)scratch;
    (void)keep;
    SpaceExec<Space>().fence();
  });
}

template <class T, class Space>
Request ibroadcast(const AxisComm& ring, const Matrix<T, Space>& buffer, int root,
                   const CommOptions& options) {
  check_root("broadcast", ring, root);
  const std::size_t n = buffer.size();
  const MpiBuffer<T, Space> mpi(flat(buffer), options.gpu_aware_mpi);
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
  return make_request(std::move(steps), [=, keep = buffer] {
    if (receives) mpi.pull_all();
    (void)keep;
  });
}

template <class T, class Space>
Request ireduce(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
                int root, const CommOptions& options) {
  check_root("reduce", ring, root);
  check_same_shape("reduce", in, out);
  const std::size_t n = in.size();
  const bool is_root = ring.rank() == root;
  std::vector<CommStep> steps;

  if (options.impl == CollectiveImpl::native) {
    const MpiBuffer<T, Space> send(flat(in), options.gpu_aware_mpi);
    const MpiBuffer<T, Space> result(flat(out), options.gpu_aware_mpi);
    send.push_all();
    steps.push_back({[=, comm = ring.comm()](std::vector<MPI_Request>& reqs) {
                       reqs.emplace_back();
                       MPI_Ireduce(send.data(), is_root ? result.data() : nullptr, mpi_count(n),
                                   mpi_datatype<T>(), MPI_SUM, root, comm, &reqs.back());
                     },
                     {}});
    return make_request(std::move(steps), [=, keep = std::make_pair(in, out)] {
      if (is_root) result.pull_all();
      (void)keep;
    });
  }
  // Ring: partial sums accumulate in the output at the root and in a copy elsewhere, so the
  // input is never modified and non-root outputs stay untouched.
  const Buffer<T, Space> accumulator =
      is_root ? flat(out) : scratch_buffer<T, Space>("reduce_accumulator", n);
  copy_range(accumulator, 0, flat(in), 0, n);
  const auto scratch = scratch_buffer<T, Space>("reduce_scratch", n);
  const MpiBuffer<T, Space> mpi(accumulator, options.gpu_aware_mpi);
  const MpiBuffer<T, Space> mpi_scratch(scratch, options.gpu_aware_mpi);
  mpi.push_all();
  append_ring_reduce(steps, ring_context<T>(ring), mpi.data(), packets_of<T>(n, options),
                     mpi_scratch.data(), mpi.accumulate(), root);
  return make_request(std::move(steps), [=, keep = out] {
    if (is_root) mpi.pull_all();
    (void)scratch;
    (void)keep;
  });
}

template <class T, class Space>
Request ishift(const AxisComm& ring, const Matrix<T, Space>& in, const Matrix<T, Space>& out,
               int displacement, const CommOptions& options) {
  check_same_shape("shift", in, out);
  require(in.data() != out.data(), "shift: input and output must be different buffers");
  const std::size_t n = in.size();
  const MpiBuffer<T, Space> send(flat(in), options.gpu_aware_mpi);
  const MpiBuffer<T, Space> recv(flat(out), options.gpu_aware_mpi);
  send.push_all();
  // A shift is point-to-point in either implementation: one Isend/Irecv pair on the ring.
  const auto ctx = ring_context<T>(ring);
  const int dest = ring.neighbour(displacement);
  const int source = ring.neighbour(-displacement);
  std::vector<CommStep> steps;
  steps.push_back({[=](std::vector<MPI_Request>& reqs) {
                     ctx.irecv(recv.data(), n, source, reqs);
                     ctx.isend(send.data(), n, dest, reqs);
                   },
                   {}});
  return make_request(std::move(steps), [=, keep = std::make_pair(in, out)] {
    recv.pull_all();
    (void)keep;
  });
}

#define MESHSLICE_INSTANTIATE_COLLECTIVES(T, Space)                                               \
  template Request iall_gather_produced<T, Space>(                                              \
      const AxisComm&, std::size_t, std::size_t,                                                \
      const std::function<void(const Matrix<T, Space>&)>&, const Matrix<T, Space>&, MatrixDim,  \
      const CommOptions&);                                                                      \
  template Request iall_gather<T, Space>(const AxisComm&, const Matrix<T, Space>&,              \
                                         const Matrix<T, Space>&, MatrixDim, const CommOptions&); \
  template Request ireduce_scatter<T, Space>(const AxisComm&, const Matrix<T, Space>&,          \
                                             const Matrix<T, Space>&, MatrixDim,                  \
                                             const CommOptions&);                                 \
  template Request iall_reduce<T, Space>(const AxisComm&, const Matrix<T, Space>&,              \
                                         const Matrix<T, Space>&, const CommOptions&);            \
  template Request ibroadcast<T, Space>(const AxisComm&, const Matrix<T, Space>&, int,          \
                                        const CommOptions&);                                      \
  template Request ireduce<T, Space>(const AxisComm&, const Matrix<T, Space>&,                  \
                                     const Matrix<T, Space>&, int, const CommOptions&);           \
  template Request ishift<T, Space>(const AxisComm&, const Matrix<T, Space>&,                   \
                                    const Matrix<T, Space>&, int, const CommOptions&);

MESHSLICE_INSTANTIATE_COLLECTIVES(float, MemSpace)
MESHSLICE_INSTANTIATE_COLLECTIVES(double, MemSpace)

}  // namespace meshslice
