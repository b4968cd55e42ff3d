#include "hardware/ici_model.hpp"

#include <algorithm>
#include <cmath>

namespace meshslice::hw {

CommCost IciModel::ring_collective(const LinkParams& link, int chips, double shard_bytes,
                                   double hbm_per_step) const {
  CommCost c;
  if (chips <= 1) return c;
  c.steps = chips - 1;
  c.launch = link.launch_s;
  c.sync = c.steps * link.sync_s;
  // The bandwidth is the collective's measured whole-ring rate (both link directions together
  // where the ring uses both): counted once, not multiplied by ring_directions.
  c.transfer = c.steps * shard_bytes / link.bandwidth;
  c.hbm_bytes = c.steps * hbm_per_step * shard_bytes;
  return c;
}

// Every step of an all-gather reads the shard it forwards and writes the one it receives; a
// reduce-scatter step also reads the local partial sum it adds to what arrived.
CommCost IciModel::all_gather(Ring ring, int chips, double shard_bytes) const {
  return ring_collective(p_.link(CommKind::all_gather, ring), chips, shard_bytes, 2.0);
}

CommCost IciModel::reduce_scatter(Ring ring, int chips, double shard_bytes) const {
  return ring_collective(p_.link(CommKind::reduce_scatter, ring), chips, shard_bytes, 3.0);
}

int IciModel::pipeline_packets(int hops, double bytes, const LinkParams& link) {
  const double x = bytes / link.bandwidth;  // the whole buffer's transfer time
  auto cost = [&](double d) { return (hops + d) * (link.sync_s + x / d); };
  // d/dD of the cost vanishes at D* = sqrt(hops x / t_sync); without synchronization cost,
  // more packets always help, bounded here at one packet per 64 bytes.
  const double cap = std::max(1.0, std::floor(bytes / 64.0));
  double d = link.sync_s > 0 ? std::sqrt(hops * x / link.sync_s) : cap;
  d = std::clamp(d, 1.0, cap);
  const double lo = std::max(1.0, std::floor(d)), hi = std::min(cap, std::ceil(d));
  return static_cast<int>(cost(lo) <= cost(hi) ? lo : hi);
}

CommCost IciModel::pipelined(const LinkParams& link, int chips, double bytes,
                             double hbm_factor) const {
  CommCost c;
  if (chips <= 1) return c;
  // Each direction streams its share of the buffer to the chips on its side of the root, at its
  // share of the ring's rate.
  const int directions = p_.ring_directions;
  const int hops = (chips - 1 + directions - 1) / directions;
  const double share = bytes / directions;
  const LinkParams one_way{link.launch_s, link.sync_s, link.bandwidth / directions};
  const int d = pipeline_packets(hops, share, one_way);
  c.steps = hops + d;
  c.launch = link.launch_s;
  c.sync = c.steps * link.sync_s;
  c.transfer = c.steps * share / d / one_way.bandwidth;
  c.hbm_bytes = hbm_factor * bytes;
  return c;
}

CommCost IciModel::broadcast(Ring ring, int chips, double bytes) const {
  return pipelined(p_.link(CommKind::all_gather, ring), chips, bytes, 2.0);
}

CommCost IciModel::reduce(Ring ring, int chips, double bytes) const {
  return pipelined(p_.link(CommKind::reduce_scatter, ring), chips, bytes, 3.0);
}

CommCost IciModel::shift(Ring ring, int chips, int displacement, double bytes) const {
  CommCost c;
  if (chips <= 1) return c;
  const int forward = ((displacement % chips) + chips) % chips;
  const int hops = std::min(forward, chips - forward);
  if (hops == 0) return c;
  const LinkParams& link = p_.link(CommKind::send_recv, ring);
  c.steps = hops;
  c.launch = link.launch_s;
  c.sync = hops * link.sync_s;
  c.transfer = hops * bytes / link.bandwidth;
  // The routers forward transit traffic without touching HBM: one read, one write per chip.
  c.hbm_bytes = 2.0 * bytes;
  return c;
}

CommCost& CommCost::operator+=(const CommCost& o) {
  launch += o.launch;
  sync += o.sync;
  transfer += o.transfer;
  hbm_bytes += o.hbm_bytes;
  steps += o.steps;
  return *this;
}

CommCost IciModel::all_reduce(Ring ring, int chips, double bytes) const {
  CommCost c;
  if (chips <= 1) return c;
  const double shard = bytes / chips;
  c += reduce_scatter(ring, chips, shard);
  c += all_gather(ring, chips, shard);
  return c;
}

CommCost IciModel::all_to_all(Ring ring, int chips, double bytes) const {
  CommCost c;
  for (int d = 1; d < chips; ++d) c += shift(ring, chips, d, bytes / (chips - 1));
  return c;
}

CommCost IciModel::send_recv(Ring ring, double bytes) const {
  // One hop to the neighbouring chip: the cost of a shift by one on a ring of two.
  return shift(ring, 2, 1, bytes);
}

}  // namespace meshslice::hw
