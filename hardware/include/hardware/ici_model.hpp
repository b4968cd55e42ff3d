#pragma once
// Timing of communication on the inter-chip interconnect (ICI) of a 2D torus: every chip has
// four full-duplex links, and every row and column of the mesh is a ring (plus the data- and
// pipeline-parallel rings, on links of their own). Each direction of a ring carries one
// operation at a time (the caller, sim::SimExecutor, serializes them: a shift occupies the
// direction it travels, a ring collective both); the rings proceed in parallel. Each cost is
// split the way the MeshSlice paper's Fig. 10 breaks communication down: launch,
// synchronization and transfer. The bandwidths are those of the machine description:
// bw_ring for an all-gather or reduce-scatter is the collective's measured rate on the whole
// ring (a step moves a shard in shard_bytes / bw_ring, over both link directions where the
// ring uses both: the MeshSlice authors' cost model, "bidirectional", counted once), and
// bw_link for a SendRecv is one link direction's rate. d = ring_directions (2 on a torus of
// full-duplex links, 1 on a ring used one way).
//
//  * AllGather / ReduceScatter on a ring of P chips (paper §3.2.2, Fig. 3 right): P-1 steps,
//    each moving every chip's shard to a neighbour and synchronizing neighbours:
//        t_launch + (P-1) * (t_sync + shard_bytes / bw_ring)
//  * Broadcast / reduce (SUMMA, paper §2.3.3, Fig. 3 left): the buffer is split over the d
//    directions, each streaming its share at bw_ring / d in D packets along a path of
//    L = ceil((P-1)/d) hops, i.e. over L + D pipeline stages (P + D - 1 for d = 1, as the paper
//    writes it), each a synchronization plus one packet time:
//        t_launch + (L + D) * (t_sync + bytes / (D bw_ring))
//    with the all-gather (broadcast) or reduce-scatter (reduce) parameters. D is the packet
//    count that minimizes this time, as a tuned library would pick it, so SUMMA's
//    synchronization cost is not overstated.
//  * SendRecv shift (Cannon, Wang): every chip of the ring sends its buffer s chips along, all
//    of it one way: h = min(s mod P, P - s mod P) hops the shorter way round, and since every
//    chip sends at once each link carries h buffers:
//        t_launch + h * (t_sync + bytes / bw_link)
//  * AllReduce (dp gradient sync): bandwidth-optimal ring all-reduce of a buffer of B bytes,
//    a reduce-scatter of shards B/P followed by an all-gather of them -- the sum of those two
//    costs, 2 (P-1) steps.
//  * AllToAll (a distributed transpose): every chip sends an equal piece of B bytes in all to
//    each other chip, as the pairwise exchange does it (MPI's algorithm for large pieces): P-1
//    rounds, round d a shift by d of the piece meant for the chip d places along -- the sum of
//    those P-1 shift costs.
//  * SendRecv (pp stage link): one point-to-point transfer of B bytes to the neighbouring chip,
//    one hop, one direction, with the send_recv parameters:
//        t_launch + t_sync + bytes / bw_link
//
// The rings are those of hw::Ring: the two mesh dimensions, the 1D ring (which takes one mesh
// dimension's calibration), and the data- and pipeline-parallel rings on their own links
// (IciParams::link).
//
// Each cost also reports the bytes the NIC moves through this chip's HBM (reads of what it
// sends, writes of what it receives, plus reads of the local partial sums a reduction adds),
// so that an executor can model the NIC contending with the cores for HBM bandwidth.
#include "hardware/machine.hpp"

namespace meshslice::hw {

struct CommCost {
  double launch = 0;
  double sync = 0;
  double transfer = 0;
  double hbm_bytes = 0;  // NIC traffic through this chip's HBM
  int steps = 0;         // synchronized steps (ring steps, pipeline stages or hops)
  double total() const { return launch + sync + transfer; }
  CommCost& operator+=(const CommCost& other);  // one operation after the other
};

class IciModel {
 public:
  explicit IciModel(const IciParams& params) : p_(params) {}
  const IciParams& params() const { return p_; }

  // `shard_bytes`: one chip's piece (its input to an all-gather, its output of a
  // reduce-scatter). A ring of one chip costs nothing.
  CommCost all_gather(Ring ring, int chips, double shard_bytes) const;
  CommCost reduce_scatter(Ring ring, int chips, double shard_bytes) const;
  // `bytes`: the whole buffer broadcast from, or reduced to, one chip.
  CommCost broadcast(Ring ring, int chips, double bytes) const;
  CommCost reduce(Ring ring, int chips, double bytes) const;
  // Every chip sends `bytes` to the chip `displacement` places along the ring.
  CommCost shift(Ring ring, int chips, int displacement, double bytes) const;
  // `bytes`: the whole buffer every chip holds and all of them sum (e.g. a dp gradient): a
  // reduce-scatter of shards bytes/chips, then an all-gather of them. One chip costs nothing.
  CommCost all_reduce(Ring ring, int chips, double bytes) const;
  // `bytes`: what every chip sends in all, bytes / (chips - 1) to each other chip.
  CommCost all_to_all(Ring ring, int chips, double bytes) const;
  // One transfer of `bytes` to the neighbouring chip (a pp stage link): one hop, one direction.
  // Costs launch and one synchronization whatever `bytes` is; the same as shift() by one place.
  CommCost send_recv(Ring ring, double bytes) const;

  // The packet count D minimizing (hops + D) * (t_sync + bytes / (D bw)) for streaming `bytes`
  // one way along `hops` links.
  static int pipeline_packets(int hops, double bytes, const LinkParams& link);

 private:
  CommCost ring_collective(const LinkParams& link, int chips, double shard_bytes,
                           double hbm_per_step) const;
  CommCost pipelined(const LinkParams& link, int chips, double bytes, double hbm_factor) const;

  IciParams p_;
};

}  // namespace meshslice::hw
