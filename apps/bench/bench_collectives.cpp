// meshslice-bench mode "collectives": each collective vs message size on one ring, every
// implementation side by side in the same run (the machines are shared and noisy, so only
// ratios measured together mean anything). Each size is also held against a memcpy of one
// shard, the yardstick the collectives' bandwidth target is set on, timed interleaved with the
// collectives: one repetition of each in turn, so both see the same machine and the same cache
// (timed on its own in a loop, a 16 MiB copy ran about 40% faster here than between
// collectives, its buffers partly still in the 32 MiB L3).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench_modes.hpp"
#include "core/timing.hpp"
#include "comm/collective_timing.hpp"
#include "comm/comm_parameters.hpp"
#include "core/csv.hpp"
#include "core/deck.hpp"
#include "core/huge_pages.hpp"
#include "core/log.hpp"
#include "core/memory_check.hpp"
#include "mesh/mesh_parameters.hpp"

namespace meshslice::bench {

namespace {

struct Settings {
  Axis axis;
  MatrixDim dim;
  std::vector<std::string> operations;
  std::vector<CollectiveImpl> impls;
  std::string precision;
  std::vector<std::size_t> sizes;  // bytes of one rank's shard
  int warmups;
  int repetitions;
};

void require_known(const std::vector<std::string>& values, const std::vector<std::string>& known,
                   const std::string& key) {
  for (const auto& value : values) {
    if (std::find(known.begin(), known.end(), value) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw UserError(
        concat("deck key '", key, "' has unknown entry '", value, "'; valid entries: ", list));
  }
}

Settings settings_from(const Teuchos::ParameterList& deck) {
  Settings s;
  s.axis = parse_axis(get_param<std::string>(deck, "collectives.axis"));
  s.dim = parse_dim(get_param<std::string>(deck, "collectives.dim"));
  s.operations = get_strings(deck, "collectives.operations");
  require_known(s.operations, timed_collectives(), "collectives.operations");
  const auto impl_names = get_strings(deck, "collectives.implementations");
  require_known(impl_names, {"native", "ring"}, "collectives.implementations");
  for (const auto& name : impl_names) s.impls.push_back(parse_impl(name));
  s.precision = get_param<std::string>(deck, "collectives.precision");
  s.warmups = get_param<int>(deck, "collectives.warmups");
  s.repetitions = get_param<int>(deck, "collectives.repetitions");
  require(s.warmups >= 0, "collectives.warmups must be >= 0, got ", s.warmups);
  require(s.repetitions >= 1, "collectives.repetitions must be >= 1, got ", s.repetitions);
  const int min_kib = get_param<int>(deck, "collectives.min_kib");
  const int max_kib = get_param<int>(deck, "collectives.max_kib");
  require(min_kib >= 1 && max_kib >= min_kib, "collectives.min_kib=", min_kib,
          " and collectives.max_kib=", max_kib, " must satisfy 1 <= min_kib <= max_kib");
  for (std::size_t kib = min_kib; kib <= static_cast<std::size_t>(max_kib); kib *= 2)
    s.sizes.push_back(kib * 1024);
  return s;
}

// Bytes crossing one ring link per rank, the figure bandwidth is quoted on (comm/collective.hpp's
// bytes_sent); a ring of one rank has no links.
double link_bytes(const std::string& op, std::size_t shard_bytes, int ranks) {
  return ranks == 1 ? 0.0 : bytes_sent(timed_collective(op).kind, ranks, double(shard_bytes));
}

std::string size_name(std::size_t bytes) {
  return bytes >= (1u << 20) ? concat(bytes >> 20, " MiB") : concat(bytes >> 10, " KiB");
}

}  // namespace

void add_collectives_parameters(Teuchos::ParameterList& valid) {
  auto& c = valid.sublist("collectives", false, "mode collectives: what to time");
  set_choice(c, "axis", "col", {"dp", "pp", "row", "col"}, "the ring the collectives run on");
  set_choice(c, "dim", "rows", {"rows", "cols"},
             "gather/scatter blocks of rows (contiguous) or of columns (repacked)");
  const auto& ops = timed_collectives();
  c.set("operations", Teuchos::Array<std::string>(ops.begin(), ops.end()),
        "collectives to time: all_gather, all_gather_in_place (this rank's shard already in its "
        "block of the output, as MeshSlice's gathers produce it), reduce_scatter, all_reduce, "
        "broadcast, reduce, shift");
  const std::vector<std::string> impls = {"native", "ring"};
  c.set("implementations", Teuchos::Array<std::string>(impls.begin(), impls.end()),
        "implementations to compare: native, ring");
  set_choice(c, "precision", "float", {"float", "double"}, "element type");
  c.set("min_kib", 8, "smallest shard per rank in KiB (sizes double up to max_kib)");
  c.set("max_kib", 65536, "largest shard per rank in KiB");
  c.set("warmups", 2, "untimed runs per size");
  c.set("repetitions", 10, "timed runs per size; the median and the minimum are reported");
}

int run_collectives(AppContext& context) {
  const Settings s = settings_from(context.deck);
  const Torus torus(MPI_COMM_WORLD, mesh_shape_from(context.deck, context.size));
  const AxisComm& ring = torus.axis(s.axis);
  CommOptions options = comm_options_from(context.deck);
  const std::size_t element = s.precision == "float" ? sizeof(float) : sizeof(double);

  log_info("collectives on the '", axis_name(s.axis), "' ring of ", ring.size(), " ranks (mesh ",
           torus.shape().str(), "), ", s.precision, ", ", dim_name(s.dim), ", ", s.sizes.size(),
           " sizes, ", s.repetitions, " repetitions");
  // The largest size's buffers, alive at once for the interleaved timing: the yardstick's two
  // shards, and per implementation the shard, the P-shard stack, one more shard and scratch of
  // about a stack (host and device when staged): a lower bound of what a size needs.
  const double largest = static_cast<double>(*std::max_element(s.sizes.begin(), s.sizes.end()));
  const double per_impl = 2.0 + 2.0 * ring.size();
  require_memory_fits(concat("the collectives' buffers for ", size_name(std::size_t(largest)),
                             " shards on a ring of ", ring.size()),
                      largest * (2.0 + per_impl * s.impls.size()), torus.comm());
  // New columns go at the end so that existing readers of the CSV keep working.
  std::unique_ptr<CsvWriter> csv;
  if (context.rank == 0)
    csv = std::make_unique<CsvWriter>(
        context.out_dir + "/collectives.csv",
        std::vector<std::string>{"operation", "implementation", "axis", "ranks", "dim", "precision",
                                 "bytes", "seconds_median", "seconds_min", "link_gbs", "memcpy_gbs",
                                 "link_over_memcpy"});

  // For the side-by-side table: median seconds[op][bytes][impl] and the memcpy GB/s measured
  // next to them.
  std::map<std::string, std::map<std::size_t, std::map<CollectiveImpl, double>>> times;
  std::map<std::string, std::map<std::size_t, double>> memcpy_gbs;
  const bool single = s.precision == "float";
  for (const auto& op : s.operations) {
    for (std::size_t bytes : s.sizes) {
      const auto [rows, cols] = shard_shape(bytes, element);
      // The yardstick first, then each implementation, timed interleaved.
      std::vector<std::function<void()>> runs = {single ? prepared_memcpy<float>(rows * cols)
                                                        : prepared_memcpy<double>(rows * cols)};
      for (CollectiveImpl impl : s.impls) {
        options.impl = impl;
        runs.push_back(
            single ? prepared_collective<float>(op, torus, s.axis, rows, cols, s.dim, options)
                   : prepared_collective<double>(op, torus, s.axis, rows, cols, s.dim, options));
      }
      const std::vector<Timing> timings = time_interleaved(runs, s.warmups, s.repetitions);
      const double copy_gbs = double(rows * cols * element) / timings[0].median / 1e9;
      memcpy_gbs[op][bytes] = copy_gbs;
      for (std::size_t i = 0; i < s.impls.size(); ++i) {
        const CollectiveImpl impl = s.impls[i];
        const Timing& t = timings[i + 1];
        times[op][bytes][impl] = t.median;
        const double gbs = link_bytes(op, bytes, ring.size()) / t.median / 1e9;
        if (csv)
          csv->row(op, impl_name(impl), axis_name(s.axis), ring.size(), dim_name(s.dim),
                   s.precision, bytes, t.median, t.min, gbs, copy_gbs, gbs / copy_gbs);
      }
    }
    log_info("  ", op, " done");
  }

  if (context.rank == 0) {
    // Link GB/s of one implementation at one size, 0 where it was not timed.
    auto gbs = [&](const std::string& op, std::size_t bytes, CollectiveImpl impl) {
      const auto& row = times[op][bytes];
      const auto it = row.find(impl);
      return it == row.end() ? 0.0 : link_bytes(op, bytes, ring.size()) / it->second / 1e9;
    };
    auto of_memcpy = [&](const std::string& op, std::size_t bytes, CollectiveImpl impl) {
      return gbs(op, bytes, impl) / memcpy_gbs[op][bytes];
    };
    const bool both = s.impls.size() == 2;
    std::printf("\n%-19s %10s %13s %13s %10s %10s %11s %11s %13s %11s\n", "operation", "shard",
                "native_us", "ring_us", "native_GB/s", "ring_GB/s", "ring/native", "memcpy_GB/s",
                "native/memcpy", "ring/memcpy");
    for (const auto& op : s.operations)
      for (std::size_t bytes : s.sizes) {
        auto& row = times[op][bytes];
        auto us = [&](CollectiveImpl impl) { return row.count(impl) ? row[impl] * 1e6 : 0.0; };
        const double ratio = both ? row[CollectiveImpl::ring] / row[CollectiveImpl::native] : 0;
        std::printf("%-19s %10s %13.1f %13.1f %10.2f %10.2f %11.2f %11.2f %13.2f %11.2f\n",
                    op.c_str(), size_name(bytes).c_str(), us(CollectiveImpl::native),
                    us(CollectiveImpl::ring), gbs(op, bytes, CollectiveImpl::native),
                    gbs(op, bytes, CollectiveImpl::ring), ratio, memcpy_gbs[op][bytes],
                    of_memcpy(op, bytes, CollectiveImpl::native),
                    of_memcpy(op, bytes, CollectiveImpl::ring));
      }
    std::printf("\nGB/s = bytes crossing one ring link per rank / time (0 on a 1-rank ring).\n"
                "memcpy = a device-to-device copy of one shard, timed interleaved with each row's "
                "collectives\n(one repetition of each in turn).\n\n");

    // The target is >= 0.5 of memcpy for large messages: per op, the worst size in 16-64 MiB
    // of the better implementation there.
    for (const auto& op : s.operations) {
      double worst = -1;
      std::size_t worst_bytes = 0;
      CollectiveImpl worst_impl = CollectiveImpl::native;
      for (std::size_t bytes : s.sizes) {
        if (bytes < (16u << 20) || bytes > (64u << 20)) continue;
        double best = -1;
        CollectiveImpl best_impl = CollectiveImpl::native;
        for (CollectiveImpl impl : s.impls)
          if (of_memcpy(op, bytes, impl) > best) {
            best = of_memcpy(op, bytes, impl);
            best_impl = impl;
          }
        if (worst < 0 || best < worst) {
          worst = best;
          worst_bytes = bytes;
          worst_impl = best_impl;
        }
      }
      if (worst < 0)
        std::printf("%s 16-64 MiB: no sizes in range\n", op.c_str());
      else
        std::printf("%s 16-64 MiB: min %.2f of memcpy (%s, at %s; target >= 0.5)\n", op.c_str(),
                    worst, impl_name(worst_impl), size_name(worst_bytes).c_str());
    }
    csv->finish();
    log_info("wrote ", csv->path());
  }
  return 0;
}

}  // namespace meshslice::bench
