// `heteroBlockCyclic:B=...,b=...[,bh=...][,g=...][,w=...][,ranks_per_node=K]`: the two-level
// block-cyclic distribution with hybrid tile sizes of Song, Tomov and Dongarra ("Enabling and
// scaling matrix computations on heterogeneous multi-core and multi-GPU systems"). B×B top-level
// tiles are dealt 2-D block-cyclically over the nodes; inside a node, the first bh columns of
// each tile are cut into B×b thin tiles for the host (cpu) processes and the rest is one wide
// tile for an accelerator (cuda, emu) process, so that both kinds of device get tiles of the size
// they run well. The rule, with its edge cases, is in docs/layouts.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "builtin.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {
namespace {

// The processes of one node, split by the kind of device they are bound to.
struct Node {
  std::vector<int> hosts;   // bound to a cpu device, in rank order
  std::vector<int> accels;  // bound to a cuda or emu device, in rank order
  double host_speed = 0;
  double accel_speed = 0;
  index_t bh = 0;          // host columns of a full top-level tile
  index_t thin_dealt = 0;  // running counter over the node's thin tiles
};

// The tile sizes a spec gives (bh: empty when the balance formula chooses).
struct Sizes {
  index_t B = 0;
  index_t b = 0;
  index_t g = 0;
  std::vector<std::int64_t> bh;
};

// Host columns of a full tile by the balance formula: the hosts' share of the node's speed times
// B, to the nearest multiple of g (ties upward), kept to multiples of g in [0, B], and to
// [g, B - g] when B >= 2g so that both kinds of device get work. A tolerance of 1e-9 makes a tie
// computed through 1/slowdown (1.4999999999) still round up, as the exact value does.
index_t balanced_host_columns(double host_speed, double accel_speed, index_t B, index_t g) {
  const double units =
      host_speed * static_cast<double>(B) / ((host_speed + accel_speed) * static_cast<double>(g));
  const index_t most = B / g;  // multiples of g that fit in B
  auto m = static_cast<index_t>(std::floor(units + 0.5 + 1e-9 * std::max(1.0, units)));
  m = std::clamp<index_t>(m, 0, most);
  if (most >= 2) m = std::clamp<index_t>(m, 1, most - 1);
  return m * g;
}

class HeteroBlockCyclicLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "heteroBlockCyclic"; }
  std::string description() const override {
    return "two-level block-cyclic with hybrid tile sizes (Song, Tomov and Dongarra): B×B tiles "
           "dealt 2-D block-cyclically over the nodes; in a node, each tile's first bh columns in "
           "B×b tiles dealt cyclically to the cpu processes, the rest one wide tile per tile "
           "column, dealt cyclically over the columns to the accelerator (cuda, emu) processes";
  }
  std::vector<ParamInfo> params() const override {
    const std::string needed =
        "the top-level tile size B and the host tile width b (e.g. B=256,b=64)";
    return {ParamInfo::integer("B", "top-level tile size").at_least(1).required(needed),
            ParamInfo::integer("b", "width of a host (thin) tile")
                .at_least(1)
                .at_most("B")
                .required(needed),
            ParamInfo::integers("bh",
                                "host columns of each full top-level tile: a multiple of b in "
                                "[0, B], one value or one per node (default: the balance "
                                "formula; the value chosen is recorded in the layout's spec)"),
            ParamInfo::integer("g", "granularity the balance formula rounds bh to: a multiple of b",
                               "b")
                .at_least("b")
                .at_most("B"),
            process_weights_param("speeds, one per process, for the balance formula (default: "
                                  "the device binding: an emulated device's 1/slowdown, others "
                                  "1, shared by the processes bound to the same device)",
                                  false),
            ParamInfo::integer("ranks_per_node",
                               "processes per node (1 to the processes), in rank order (default: "
                               "the nodes of the run; one node when they are unknown, as in a "
                               "plan for another run)")};
  }

  // Two tile sizes; with hosts and accelerators both, the host share tuned by prediction (every
  // multiple of b; the balance formula's value is the first spec's). Weighed by the binding by
  // default, by the speeds when models say more; the nodes as the run will have them.
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    const auto own = [&](Spec s) {
      if (!c.model_files.empty()) s = s.with("w", c.weights());
      if (c.ranks_per_node > 0) s = s.with("ranks_per_node", c.ranks_per_node);
      return s;
    };
    std::vector<Spec> out{own(Spec(name()).with("B", 256).with("b", 64)),
                          own(Spec(name()).with("B", 512).with("b", 128))};
    if (c.hosts && c.accelerators) {
      for (int bh = 0; bh <= 256; bh += 64)
        out.push_back(own(Spec(name()).with("B", 256).with("b", 64).with("bh", bh)));
    }
    return out;
  }
  Layout make(const LayoutRequest& request) const override {
    if (request.shape.rank() < 2) {
      throw Error(ErrorKind::shape,
                  fmt::format("layout '{}' needs a shape of at least 2 axes, got {}",
                              request.spec.str(), request.shape.str()));
    }
    const Sizes sizes = read_sizes(request);
    const int q = request.topology.grid_size();
    std::vector<double> speed;
    if (request.spec.has("w")) speed = process_weights(request, static_cast<std::size_t>(q));
    std::vector<Node> nodes = group_nodes(request, q);
    if (!sizes.bh.empty() && sizes.bh.size() != 1 && sizes.bh.size() != nodes.size()) {
      throw plugin_error(request, fmt::format("bh has {} values; give one, or one per node ({})",
                                              sizes.bh.size(), nodes.size()));
    }
    if (speed.empty()) speed = binding_speeds(request, q, nodes);
    const bool computed = split_nodes(nodes, speed, sizes);
    std::vector<std::vector<Shape>> blocks = deal_tiles(request, nodes, sizes);
    // The host columns chosen by the formula go into the spec, so programs and hit-layout see
    // them and the spec parses back to the same layout.
    Spec out = request.spec;
    if (computed) out.set("bh", recorded_bh(nodes, sizes.B, sizes.b));
    return Layout(request.topology, request.shape, std::move(out), std::move(blocks));
  }

 private:
  // The tile sizes of the spec. The registry checked the declared types and ranges (B >= 1,
  // 1 <= b <= B, b <= g <= B); the rules between parameters are checked here, before anything
  // about the devices, so that a bad value is reported whatever they are.
  static Sizes read_sizes(const LayoutRequest& request) {
    Sizes s;
    s.B = request.spec.get_int("B", 0);
    s.b = request.spec.get_int("b", 0);
    s.g = request.spec.get_int("g", s.b);
    if (s.g % s.b != 0) {
      throw plugin_error(request, fmt::format("g={} is not a multiple of b={} (g rounds bh, which "
                                              "must be a multiple of b)",
                                              s.g, s.b));
    }
    s.bh = request.spec.get_ints("bh");
    for (const std::int64_t v : s.bh) {
      if (v < 0 || v > s.B || v % s.b != 0) {
        throw plugin_error(request, fmt::format("bh={} is not a multiple of b={} in [0, B={}] (the "
                                                "host columns of a top-level tile)",
                                                v, s.b, s.B));
      }
    }
    return s;
  }

  static Error plugin_error(const LayoutRequest& request, const std::string& why) {
    return Error(ErrorKind::plugin, fmt::format("layout '{}': {}", request.spec.str(), why));
  }

  // Each node's host columns: all for a node of hosts, none for one of accelerators, else bh as
  // given or by the balance formula from the speeds. True when the formula chose some.
  static bool split_nodes(std::vector<Node>& nodes, const std::vector<double>& speed,
                          const Sizes& sizes) {
    bool computed = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      Node& node = nodes[i];
      for (const int p : node.hosts) node.host_speed += speed[static_cast<std::size_t>(p)];
      for (const int p : node.accels) node.accel_speed += speed[static_cast<std::size_t>(p)];
      if (node.accels.empty()) {
        node.bh = sizes.B;  // all host
      } else if (node.hosts.empty()) {
        node.bh = 0;  // all accelerators
      } else if (!sizes.bh.empty()) {
        node.bh = sizes.bh.size() == 1 ? sizes.bh[0] : sizes.bh[i];
      } else {
        node.bh = balanced_host_columns(node.host_speed, node.accel_speed, sizes.B, sizes.g);
        computed = true;
      }
    }
    return computed;
  }

  // Every process's blocks: the top-level tiles dealt over the nodes, each cut into its node's
  // thin host tiles and one wide accelerator tile.
  static std::vector<std::vector<Shape>> deal_tiles(const LayoutRequest& request,
                                                    std::vector<Node>& nodes, const Sizes& sizes) {
    const index_t B = sizes.B;
    const index_t b = sizes.b;
    // The nodes on a near-square grid (as MPI_Dims_create), row-major: top-level tile (I, J)
    // belongs to node (I mod grid_rows)·grid_cols + J mod grid_cols.
    const std::vector<int> dims = balanced_dims(static_cast<int>(nodes.size()), 2);
    const index_t grid_rows = dims[0];
    const index_t grid_cols = dims[1];
    const Sig& rows = request.shape[0];
    const Sig& cols = request.shape[1];
    const index_t tile_rows = rows.size() / B + (rows.size() % B != 0 ? 1 : 0);
    const index_t tile_cols = cols.size() / B + (cols.size() % B != 0 ? 1 : 0);
    // Counted before the blocks are made (b=1 over a large matrix would not fit in memory): at
    // most ceil(B/b) thin tiles and one wide tile per top-level tile.
    require_block_count(request, static_cast<double>(tile_rows) * static_cast<double>(tile_cols) *
                                     static_cast<double>(B / b + (B % b != 0 ? 1 : 0) + 1));

    std::vector<std::vector<Shape>> blocks(static_cast<std::size_t>(request.topology.procs()));
    // Row-major over the top-level tiles, so every process's blocks come in row-major order and
    // each node's running counter deals its thin tiles row by row.
    for (index_t I = 0; I < tile_rows; ++I) {
      const index_t r0 = checked_mul(I, B, "a tile row's first position");
      const Sig row_sig = rows.select_tile(r0, std::min(rows.size() - r0, B) + r0);
      for (index_t J = 0; J < tile_cols; ++J) {
        Node& node = nodes[static_cast<std::size_t>((I % grid_rows) * grid_cols + J % grid_cols)];
        const index_t c0 = checked_mul(J, B, "a tile column's first position");
        const index_t width = std::min(cols.size() - c0, B);
        // A narrower last tile: the host keeps its columns only as whole thin tiles, so its tiles
        // stay b wide, and the accelerators take what is left (possibly nothing).
        const index_t host = node.accels.empty() ? width : std::min(node.bh, width / b * b);
        const auto add = [&](int p, index_t first, index_t last) {
          blocks[static_cast<std::size_t>(p)].push_back(
              request.shape.with_sig(0, row_sig)
                  .with_sig(1, cols.select_tile(c0 + first, c0 + last)));
        };
        for (index_t first = 0; first < host; first += b) {
          const auto deal =
              static_cast<std::size_t>(node.thin_dealt++ % static_cast<index_t>(node.hosts.size()));
          add(node.hosts[deal], first, std::min(first + b, host));
        }
        if (host < width) {
          // The node's k-th tile column (J = k·grid_cols + its column) goes to accelerator k mod A:
          // the paper's owner(j) = ((j/s - 1) mod P) + 1, numbered from 0.
          const index_t k = J / grid_cols;
          add(node.accels[static_cast<std::size_t>(k % static_cast<index_t>(node.accels.size()))],
              host, width);
        }
      }
    }
    return blocks;
  }

  // The nodes in the order of their first process, each with its host and accelerator processes.
  // Nodes come from ranks_per_node, else the request (the run's nodes); unknown nodes (a plan for
  // another run) make one node, the paper's single machine.
  static std::vector<Node> group_nodes(const LayoutRequest& request, int q) {
    // Unknown nodes (a plan for another run): one node, the paper's single machine.
    const std::vector<int> node_of =
        process_nodes(request, q).value_or(std::vector<int>(static_cast<std::size_t>(q), 0));
    std::vector<Node> nodes;
    std::map<int, std::size_t> index;
    for (int p = 0; p < q; ++p) {
      auto [it, fresh] = index.emplace(node_of[static_cast<std::size_t>(p)], nodes.size());
      if (fresh) nodes.emplace_back();
      Node& node = nodes[it->second];
      (is_accelerator(request, p) ? node.accels : node.hosts).push_back(p);
    }
    return nodes;
  }

  static bool is_accelerator(const LayoutRequest& request, int p) {
    if (static_cast<std::size_t>(p) >= request.devices.size()) return false;  // unknown: host
    return request.devices[static_cast<std::size_t>(p)].kind != DeviceKind::cpu;
  }

  // Each process's speed from the device bindings: the device's binding_weight, divided among the
  // processes of its node bound to it (they share the device). A binding without an index (`cpu*3`
  // before the ranks are placed) takes a device of its own, as placement will give it.
  static std::vector<double> binding_speeds(const LayoutRequest& request, int q,
                                            const std::vector<Node>& nodes) {
    using Device = std::tuple<std::size_t, DeviceKind, int>;  // (node, kind, index)
    std::vector<double> speed(static_cast<std::size_t>(q), 1.0);
    std::vector<std::optional<Device>> device(static_cast<std::size_t>(q));
    std::map<Device, int> sharing;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      for (const auto* group : {&nodes[i].hosts, &nodes[i].accels}) {
        for (const int p : *group) {
          const auto at = static_cast<std::size_t>(p);
          if (at >= request.devices.size()) continue;  // unknown device: a cpu of its own
          const DeviceBinding& d = request.devices[at];
          speed[at] = binding_weight(d);
          if (d.index == DeviceBinding::any_index) continue;
          device[at] = Device{i, d.kind, d.index};
          ++sharing[*device[at]];
        }
      }
    }
    for (std::size_t p = 0; p < speed.size(); ++p) {
      if (device[p]) speed[p] /= sharing[*device[p]];
    }
    return speed;
  }

  // The `bh` the spec records: one value when every node that has both kinds of process got the
  // same, else one per node (a node with one kind only has its split forced, whatever its entry
  // says: it is written as the nearest valid value, 0 or B down to a multiple of b).
  static std::string recorded_bh(const std::vector<Node>& nodes, index_t B, index_t b) {
    std::vector<index_t> mixed;
    std::vector<index_t> each;
    for (const Node& node : nodes) {
      const bool both = !node.hosts.empty() && !node.accels.empty();
      if (both) mixed.push_back(node.bh);
      each.push_back(both ? node.bh : node.accels.empty() ? B / b * b : 0);
    }
    if (std::all_of(mixed.begin(), mixed.end(), [&](index_t v) { return v == mixed.front(); })) {
      return std::to_string(mixed.front());
    }
    return fmt::format("{}", fmt::join(each, ","));
  }
};

}  // namespace

void register_hetero_block_cyclic_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<HeteroBlockCyclicLayout>());
}

}  // namespace hit::detail
