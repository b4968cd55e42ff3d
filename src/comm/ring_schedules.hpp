#pragma once
// Step lists of the explicit ring algorithms, on raw buffers that MPI may touch.
//
// A buffer is divided into P "chunks" (offset, length); chunk p is the part rank p owns at the
// end of a reduce-scatter or contributes to an all-gather. Ranks are positions on the ring
// (AxisComm rank = mesh coordinate), messages go to next() and come from prev(), so every step
// uses each ring link once in one direction: the traffic pattern the hardware model times as
// (P-1) x (t_sync + bytes/bw).
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

#include "comm/mpi_datatype.hpp"
#include "comm/request.hpp"
#include "mesh/torus.hpp"

namespace meshslice {

struct Chunk {
  std::size_t offset = 0;
  std::size_t length = 0;
};

// P chunks of n elements each, back to back.
std::vector<Chunk> equal_blocks(int parts, std::size_t n);
// n elements split into P nearly equal chunks (the first n % P are one longer).
std::vector<Chunk> balanced_chunks(int parts, std::size_t n);
// Narrows an element count to MPI's int, with a UserError when a message is too large.
int mpi_count(std::size_t n);

// Writes dst = a + b (`count` elements), in whatever memory space they live.
template <class T>
using Sum = std::function<void(T* dst, const T* a, const T* b, std::size_t count)>;

template <class T>
struct RingContext {
  const AxisComm& ring;
  int tag;

  void isend(const T* data, std::size_t count, int peer, std::vector<MPI_Request>& out) const {
    out.emplace_back();
    MPI_Isend(data, mpi_count(count), mpi_datatype<T>(), peer, tag, ring.comm(), &out.back());
  }
  void irecv(T* data, std::size_t count, int peer, std::vector<MPI_Request>& out) const {
    out.emplace_back();
    MPI_Irecv(data, mpi_count(count), mpi_datatype<T>(), peer, tag, ring.comm(), &out.back());
  }
};

inline int ring_mod(int value, int size) { return ((value % size) + size) % size; }

// Elements of the running partial sum append_ring_reduce_scatter_into needs for chunks of up to
// n elements on a ring of `parts`: none on a ring of 2, whose one step goes from input to output.
inline std::size_t ring_partial_elements(int parts, std::size_t n) { return parts > 2 ? n : 0; }

// All-gather in place: on entry chunk rank() holds this rank's data; on exit every chunk does.
// Step t sends chunk (r-t) to the next rank and receives chunk (r-t-1) from the previous one.
template <class T>
void append_ring_all_gather(std::vector<CommStep>& steps, const RingContext<T>& ctx, T* base,
                            const std::vector<Chunk>& chunks) {
  const int size = ctx.ring.size();
  const int rank = ctx.ring.rank();
  for (int t = 0; t + 1 < size; ++t) {
    const Chunk send = chunks[ring_mod(rank - t, size)];
    const Chunk recv = chunks[ring_mod(rank - t - 1, size)];
    steps.push_back({[=](std::vector<MPI_Request>& reqs) {
                       ctx.irecv(base + recv.offset, recv.length, ctx.ring.prev(), reqs);
                       ctx.isend(base + send.offset, send.length, ctx.ring.next(), reqs);
                     },
                     {}});
  }
}

// Reduce-scatter of a read-only input into `out` (chunk rank() of the sum over the ring). The
// schedule is the textbook ring shifted by one so that rank r ends owning chunk r; the running
// partial sums travel through `partial` (the longest chunk), so the input needs no working copy.
// Step t sends the partial of chunk (r-t-1) -- at t = 0 the input's own chunk -- and receives
// that of chunk (r-t-2); that chunk's input plus what arrived is the next partial, and at the
// last step (chunk r) the result.
// Each step moves its chunks in pieces of at most `piece` elements, and a received piece is
// summed at once, while it is still in cache: received whole, a chunk would go to memory and be
// read back for the sum. Pieces land in `received` (one piece long), except at the last step,
// which receives straight into `out` and adds the input there, so that the output is written
// once and never read from memory first -- unless `out` is the input's own chunk (an all-reduce
// in place), which the sum still has to read. On a 2-rank node where MPI copies between
// processes this took the reduce-scatter from about 0.4 of a memcpy to about 0.6. Piece j of a
// step is sent before its sum overwrites the same range of `partial` (its send has completed
// when its `after` runs), and the sender and the receiver of a chunk cut it into the same
// pieces, which MPI matches in order. On a ring of 2 the one step reads the input and writes
// the output: `partial` is never touched (ring_partial_elements).
template <class T>
void append_ring_reduce_scatter_into(std::vector<CommStep>& steps, const RingContext<T>& ctx,
                                     const T* input, const std::vector<Chunk>& chunks, T* partial,
                                     T* received, T* out, const Sum<T>& sum, std::size_t piece) {
  const int size = ctx.ring.size();
  const int rank = ctx.ring.rank();
  auto pieces = [piece](std::size_t length) { return (length + piece - 1) / piece; };
  const bool out_is_input = out == input + chunks[rank].offset;
  for (int t = 0; t + 1 < size; ++t) {
    const Chunk send = chunks[ring_mod(rank - t - 1, size)];
    const Chunk recv = chunks[ring_mod(rank - t - 2, size)];
    const bool last = t + 2 == size;
    const bool land_in_out = last && !out_is_input;
    const T* from = t == 0 ? input + send.offset : partial;
    T* into = last ? out : partial;
    const std::size_t count = std::max(pieces(send.length), pieces(recv.length));
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t at = j * piece;
      const std::size_t send_length = at < send.length ? std::min(piece, send.length - at) : 0;
      const std::size_t recv_length = at < recv.length ? std::min(piece, recv.length - at) : 0;
      T* landing = land_in_out ? into + at : received;
      steps.push_back({[=](std::vector<MPI_Request>& reqs) {
                         if (recv_length) ctx.irecv(landing, recv_length, ctx.ring.prev(), reqs);
                         if (send_length) ctx.isend(from + at, send_length, ctx.ring.next(), reqs);
                       },
                       [=] {
                         if (recv_length)
                           sum(into + at, input + recv.offset + at, landing, recv_length);
                       }});
    }
  }
}

// Pipelined chain broadcast from `root` (paper Fig. 3): the buffer travels as packets down the
// ring root -> root+1 -> ... -> root-1; a middle rank forwards packet k-1 while receiving k,
// so the whole takes P+D-1 stages for D packets.
template <class T>
void append_ring_broadcast(std::vector<CommStep>& steps, const RingContext<T>& ctx, T* base,
                           const std::vector<Chunk>& packets, int root) {
  const int size = ctx.ring.size();
  const int position = ring_mod(ctx.ring.rank() - root, size);
  const bool receives = position > 0;
  const bool forwards = position + 1 < size;
  const int packet_count = static_cast<int>(packets.size());
  if (size == 1) return;
  for (int k = 0; k <= packet_count; ++k) {
    const bool recv_k = receives && k < packet_count;
    // The root sends packet k at step k; others forward the packet received one step earlier.
    const int send_index = receives ? k - 1 : k;
    const bool send_k = forwards && send_index >= 0 && send_index < packet_count;
    if (!recv_k && !send_k) continue;
    const Chunk recv = recv_k ? packets[k] : Chunk{};
    const Chunk send = send_k ? packets[send_index] : Chunk{};
    steps.push_back({[=](std::vector<MPI_Request>& reqs) {
                       if (recv_k)
                         ctx.irecv(base + recv.offset, recv.length, ctx.ring.prev(), reqs);
                       if (send_k)
                         ctx.isend(base + send.offset, send.length, ctx.ring.next(), reqs);
                     },
                     {}});
  }
}

// Pipelined chain reduction into `root`: partial sums flow root+1 -> root+2 -> ... -> root.
// `accumulator` starts as this rank's contribution; at the root it ends as the total.
// `received` holds one packet: packet k arrives there and is added at once, while still in
// cache, before packet k+1 is posted to arrive in the same place.
template <class T>
void append_ring_reduce(std::vector<CommStep>& steps, const RingContext<T>& ctx, T* accumulator,
                        const std::vector<Chunk>& packets, T* received, const Sum<T>& sum,
                        int root) {
  const int size = ctx.ring.size();
  const int position = ring_mod(ctx.ring.rank() - root - 1, size);  // root is last (size-1)
  const bool receives = position > 0;
  const bool forwards = position + 1 < size;
  const int packet_count = static_cast<int>(packets.size());
  if (size == 1) return;
  for (int k = 0; k <= packet_count; ++k) {
    const bool recv_k = receives && k < packet_count;
    const int send_index = receives ? k - 1 : k;  // forward a packet once our part is added
    const bool send_k = forwards && send_index >= 0 && send_index < packet_count;
    if (!recv_k && !send_k) continue;
    const Chunk recv = recv_k ? packets[k] : Chunk{};
    const Chunk send = send_k ? packets[send_index] : Chunk{};
    steps.push_back({[=](std::vector<MPI_Request>& reqs) {
                       if (recv_k) ctx.irecv(received, recv.length, ctx.ring.prev(), reqs);
                       if (send_k)
                         ctx.isend(accumulator + send.offset, send.length, ctx.ring.next(), reqs);
                     },
                     [=] {
                       if (recv_k)
                         sum(accumulator + recv.offset, accumulator + recv.offset, received,
                             recv.length);
                     }});
  }
}

}  // namespace meshslice
