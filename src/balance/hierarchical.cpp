#include "hit/balance/hierarchical.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "hit/balance/kernels.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/timer.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/layout.hpp"
#include "hit/topology.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::balance {

using fpm::check_partitioner;
using fpm::evaluate;
using fpm::HierarchicalMethod;
using fpm::load_model;
using fpm::Model;
using fpm::ModelKind;
using fpm::partition;
using fpm::partition_even;
using fpm::partition_proportional;
using fpm::Point;
using fpm::save_model;

namespace {

using Sizes = std::vector<std::int64_t>;

// Where the processes are: node index by first rank (the order `hierarchical` uses), and this
// rank's node, its rank among the node's processes and their number.
struct Placement {
  std::vector<int> node_of_rank;
  int nodes = 0;
  int node = 0;
  int node_rank = 0;
  int node_size = 1;
};

Placement place(const PhysicalTopology& topo) {
  Placement pl;
  std::map<int, int> index;
  for (const RankPlacement& r : topo.ranks()) {
    auto [it, fresh] = index.emplace(r.node, static_cast<int>(index.size()));
    pl.node_of_rank.push_back(it->second);
  }
  pl.nodes = static_cast<int>(index.size());
  pl.node = pl.node_of_rank.at(static_cast<std::size_t>(topo.mine().rank));
  MPI_Comm_rank(topo.node_comm(), &pl.node_rank);
  MPI_Comm_size(topo.node_comm(), &pl.node_size);
  return pl;
}

std::vector<double> as_doubles(const Sizes& s) {
  return {s.begin(), s.end()};
}

// The rectangle of every node for the target areas.
std::vector<Shape> node_rectangles(const Sizes& targets, int block, std::int64_t n) {
  const auto r = static_cast<int>(targets.size());
  const Layout nodes = layout(fpm::hierarchical_node_spec(targets, block), topology("array", r),
                              Shape{Sig(0, n), Sig(0, n)},
                              {.devices = std::vector<DeviceBinding>(static_cast<std::size_t>(r))});
  std::vector<Shape> out;
  for (int i = 0; i < r; ++i) out.push_back(nodes.blocks(i).front());
  return out;
}

std::int64_t blocks_of(std::int64_t elements, int block) {
  return (elements + block - 1) / block;
}

// The areas of the rectangles in blocks, at least 1 (a partial block at the matrix edge counts by
// its elements).
Sizes realised_areas(const std::vector<Shape>& rects, int block) {
  Sizes out;
  for (const Shape& s : rects) {
    const double area = static_cast<double>(s[0].size()) * static_cast<double>(s[1].size()) /
                        (static_cast<double>(block) * static_cast<double>(block));
    out.push_back(std::max<std::int64_t>(1, std::llround(area)));
  }
  return out;
}

std::vector<Point> node_points(const Sizes& areas, const std::vector<double>& seconds) {
  std::vector<Point> points;
  for (std::size_t i = 0; i < areas.size(); ++i)
    points.push_back(Point{areas[i], seconds[i], 1, 0});
  return points;
}

double node_spread(const Sizes& areas, const std::vector<double>& seconds) {
  return spread(node_points(areas, seconds));
}

// The device units of a rectangle `columns` elements wide.
std::int64_t device_units(const HierarchicalOptions& o, std::int64_t columns) {
  return o.block_columns ? blocks_of(columns, o.block) : columns;
}

// Model files -----------------------------------------------------------------------------------

std::string node_model_path(const HierarchicalOptions& o, int node) {
  return (std::filesystem::path(o.models_dir) /
          fmt::format("node-{}-b{}-p{}.csv", node, o.block, o.panel > 0 ? o.panel : o.block))
      .string();
}

std::string device_model_path(const HierarchicalOptions& o, int node, int device,
                              std::int64_t rows) {
  return (std::filesystem::path(o.models_dir) /
          fmt::format("device-{}-{}-b{}-p{}-rows{}-unit{}.csv", node, device, o.block,
                      o.panel > 0 ? o.panel : o.block, rows, o.block_columns ? o.block : 1))
      .string();
}

// Replaces `models` by the files' when every one of them exists; true when they did.
bool load_all(std::vector<Model>& models, const std::vector<std::string>& paths, ModelKind kind) {
  if (paths.empty()) return false;
  for (const std::string& p : paths) {
    if (!std::filesystem::exists(p)) return false;
  }
  for (std::size_t i = 0; i < paths.size(); ++i) models[i] = load_model(paths[i], kind);
  return true;
}

void save(const std::string& path, Model model, const std::string& what, int block) {
  model.set_info("unit", what);
  model.set_info("block", std::to_string(block));
  save_model(path, model);
}

// The annotation of a node model that records the area the run chose for the node.
constexpr const char* chosen_key = "chosen_area";

// The chosen areas the models record, when every one does and they sum to `total`; else empty.
Sizes chosen_areas(const std::vector<Model>& models, std::int64_t total) {
  Sizes areas;
  std::int64_t sum = 0;
  for (const Model& m : models) {
    const auto it = m.info().find(chosen_key);
    if (it == m.info().end()) return {};
    try {
      areas.push_back(std::stoll(it->second));
    } catch (const std::exception&) {
      return {};
    }
    if (areas.back() < 0) return {};
    sum += areas.back();
  }
  return sum == total ? areas : Sizes{};
}

// IDPA on one node ------------------------------------------------------------------------------

struct DeviceLevel {
  std::int64_t columns = 0;  // this rank's block columns
  double seconds = 0;        // this rank's last measured time (0: none)
  double node_seconds = 0;   // the node's: its slowest device
  int iterations = 0;
  DynamicStatus status = DynamicStatus::converged;
  bool loaded = false;
};

// Balances the node's devices on a rectangle `rows` elements tall and `units` block columns wide.
// Collective over the node's communicator.
DeviceLevel balance_devices(const HierarchicalOptions& o, const std::string& algorithm,
                            ModelKind kind, const Placement& pl, MPI_Comm node_comm,
                            const PanelKernelFactory& kernel, std::int64_t rows,
                            std::int64_t units) {
  PartitionContext ctx(units, pl.node_size, algorithm, kind);
  DeviceLevel out;
  std::vector<std::string> paths;
  if (!o.models_dir.empty()) {
    for (int j = 0; j < pl.node_size; ++j) paths.push_back(device_model_path(o, pl.node, j, rows));
  }
  collectively(node_comm, [&] { out.loaded = load_all(ctx.models, paths, kind); });
  if (out.loaded && std::all_of(ctx.models.begin(), ctx.models.end(),
                                [](const Model& m) { return m.usable(); })) {
    ctx.dist = partition(algorithm, ctx.models, units);  // the same on every rank of the node
  }
  BenchmarkKernel k;
  collectively(node_comm, [&] { k = kernel(rows, o.block_columns ? o.block : 1); });
  partition_dynamic(ctx, node_comm, k, o.precision, o.device_eps, o.device_iterations, node_comm);
  const auto me = static_cast<std::size_t>(pl.node_rank);
  out.columns = ctx.dist.parts[me].d;
  out.seconds = ctx.measured[me].t;
  out.iterations = ctx.iterations;
  out.status = ctx.status;
  if (ctx.status == DynamicStatus::converged || ctx.status == DynamicStatus::stalled) {
    for (const Point& p : ctx.measured) out.node_seconds = std::max(out.node_seconds, p.t);
  } else {
    out.node_seconds = evaluate(ctx.models, ctx.dist.sizes(), algorithm).makespan;
  }
  collectively(node_comm, [&] {
    if (o.models_dir.empty() || pl.node_rank != 0) return;
    for (int j = 0; j < pl.node_size; ++j) {
      const Model& m = ctx.models[static_cast<std::size_t>(j)];
      if (!m.empty()) {
        save(device_model_path(o, pl.node, j, rows), m,
             fmt::format("{} column(s) of {} rows", o.block_columns ? o.block : 1, rows), o.block);
      }
    }
  });
  return out;
}

// What every rank tells the others after IDPA on its node.
struct DeviceReport {
  std::int64_t columns = 0;  // its device units
  double seconds = 0;        // its last measured time
  double node_seconds = 0;   // its node's
  int iterations = 0;        // its node's IDPA steps
  DynamicStatus status = DynamicStatus::converged;
  bool loaded = false;  // its node's device models came from models_dir
};

// One INPA step: every node balances its devices on its rectangle for `targets`; returns what all
// ranks measured (the same on every rank).
HierarchicalStep measure_step(Environment& env, const HierarchicalOptions& o,
                              const std::string& algorithm, ModelKind kind, const Placement& pl,
                              const PanelKernelFactory& kernel, const Sizes& targets,
                              bool& loaded) {
  const PhysicalTopology& topo = PhysicalTopology::of(env);
  const std::vector<Shape> rects = node_rectangles(targets, o.block, o.n);
  const Shape& mine = rects[static_cast<std::size_t>(pl.node)];
  DeviceLevel dev;
  collectively(env.comm(), [&] {
    dev = balance_devices(o, algorithm, kind, pl, topo.node_comm(), kernel, mine[0].size(),
                          device_units(o, mine[1].size()));
  });
  const std::vector<DeviceReport> all =
      allgather(DeviceReport{dev.columns, dev.seconds, dev.node_seconds, dev.iterations, dev.status,
                             dev.loaded},
                env.comm());

  HierarchicalStep step;
  step.target_areas = targets;
  const auto r = static_cast<std::size_t>(pl.nodes);
  step.node_seconds.assign(r, 0);
  step.device_iterations.assign(r, 0);
  step.device_status.assign(r, "");
  step.areas = realised_areas(rects, o.block);
  bool all_loaded = true;
  for (std::size_t q = 0; q < all.size(); ++q) {
    const DeviceReport& x = all[q];
    const auto node = static_cast<std::size_t>(pl.node_of_rank[q]);
    step.columns.push_back(x.columns);
    step.device_seconds.push_back(x.seconds);
    step.node_seconds[node] = x.node_seconds;
    step.device_iterations[node] = x.iterations;
    step.device_status[node] = std::string(to_string(x.status));
    all_loaded = all_loaded && x.loaded;
  }
  loaded = all_loaded;
  step.spread = node_spread(step.areas, step.node_seconds);
  return step;
}

void check_options(const HierarchicalOptions& o) {
  const auto bad = [](const std::string& why) {
    return Error(ErrorKind::invalid_argument, "hierarchical partitioning: " + why);
  };
  if (o.n < 1) throw bad(fmt::format("n = {} (must be >= 1)", o.n));
  if (o.block < 1 || o.block > 4096) throw bad(fmt::format("b = {} (allowed 1 to 4096)", o.block));
  if (o.panel < 0 || o.panel > 4096) {
    throw bad(fmt::format("panel = {} (allowed 1 to 4096, or 0 for b)", o.panel));
  }
  if (!(o.node_eps >= 0) || !(o.device_eps >= 0)) {
    throw bad(fmt::format("eps = {} / {} (must be >= 0)", o.node_eps, o.device_eps));
  }
  if (o.max_iterations < 1 || o.device_iterations < 1) {
    throw bad(
        fmt::format("{} / {} iterations (at least 1)", o.max_iterations, o.device_iterations));
  }
}

// A device's speed (blocks of C per second; 0: not measured) and its time, as single-CPM measures.
struct DeviceSpeed {
  double speed = 0;
  double seconds = 0;
};

// single-CPM: one measurement of every device on the homogeneous split; nodes get areas in
// proportion to the sums of their devices' speeds, devices columns in proportion to theirs.
HierarchicalPartition single_cpm(Environment& env, const HierarchicalOptions& o,
                                 const Placement& pl, const PanelKernelFactory& kernel,
                                 std::int64_t total) {
  const PhysicalTopology& topo = PhysicalTopology::of(env);
  HierarchicalPartition out;
  const std::vector<Model> nobody(static_cast<std::size_t>(pl.nodes));
  const Sizes even = partition_even(nobody, total).sizes();
  const Shape mine = node_rectangles(even, o.block, o.n)[static_cast<std::size_t>(pl.node)];
  const std::int64_t units = device_units(o, mine[1].size());
  const std::vector<Model> devices(static_cast<std::size_t>(pl.node_size));
  const std::int64_t d =
      partition_even(devices, units).parts[static_cast<std::size_t>(pl.node_rank)].d;
  Measurement m;
  collectively(env.comm(), [&] {
    BenchmarkKernel k;
    collectively(topo.node_comm(),
                 [&] { k = kernel(mine[0].size(), o.block_columns ? o.block : 1); });
    m = measure(k, d, o.precision, topo.node_comm());
    if (m.failure) std::rethrow_exception(m.failure);
    if (m.peer_failed) throw Error(m.peer_kind, m.peer_error);
  });
  // Blocks of C per second.
  const double unit_area = static_cast<double>(mine[0].size()) *
                           static_cast<double>(o.block_columns ? o.block : 1) /
                           (static_cast<double>(o.block) * static_cast<double>(o.block));
  const double speed = m.measured() ? static_cast<double>(d) * unit_area / m.point.t : 0;
  std::vector<DeviceSpeed> all = allgather(DeviceSpeed{speed, m.point.t}, env.comm());
  const std::size_t p = all.size();
  std::vector<double> node_speed(static_cast<std::size_t>(pl.nodes), 0);
  std::vector<int> measured(static_cast<std::size_t>(pl.nodes), 0);
  for (std::size_t q = 0; q < p; ++q) {
    const auto i = static_cast<std::size_t>(pl.node_of_rank[q]);
    node_speed[i] += all[q].speed;
    measured[i] += all[q].speed > 0 ? 1 : 0;
  }
  // A device that had no column to measure is taken as fast as its node's average.
  for (std::size_t q = 0; q < p; ++q) {
    const auto i = static_cast<std::size_t>(pl.node_of_rank[q]);
    if (!(all[q].speed > 0)) all[q].speed = measured[i] > 0 ? node_speed[i] / measured[i] : 1.0;
    out.weights.push_back(all[q].speed);
  }
  std::vector<Model> nodes;
  for (std::size_t i = 0; i < node_speed.size(); ++i) {
    nodes.push_back(Model::constant_speed(node_speed[i] > 0 ? node_speed[i] : 1.0));
  }
  out.areas = partition_proportional(nodes, total).sizes();
  HierarchicalStep step;
  step.iteration = 1;
  step.target_areas = even;
  step.areas = realised_areas(node_rectangles(even, o.block, o.n), o.block);
  step.node_seconds.assign(static_cast<std::size_t>(pl.nodes), 0);
  for (std::size_t q = 0; q < p; ++q) {
    auto& t = step.node_seconds[static_cast<std::size_t>(pl.node_of_rank[q])];
    t = std::max(t, all[q].seconds);
    step.device_seconds.push_back(all[q].seconds);
  }
  step.spread = node_spread(step.areas, step.node_seconds);
  out.steps.push_back(step);
  out.status = DynamicStatus::stalled;  // one step, by definition
  return out;
}

// multiple-CPM and FPM: INPA over the nodes, each step balancing every node's devices (IDPA) on
// its rectangle, until the nodes' times agree. The result lacks what partition_hierarchical adds.
HierarchicalPartition iterate_levels(Environment& env, const HierarchicalOptions& o,
                                     const Placement& pl, const PanelKernelFactory& kernel,
                                     std::int64_t total) {
  HierarchicalPartition out;
  const bool cpm = o.method == HierarchicalMethod::multiple_cpm;
  const std::string algorithm = !o.algorithm.empty() ? o.algorithm
                                : cpm                ? "proportional"
                                                     : "geometric";
  const ModelKind kind = cpm ? ModelKind::constant : ModelKind::piecewise;
  PartitionContext nodes(total, pl.nodes, algorithm, kind);
  std::vector<std::string> node_paths;
  if (!o.models_dir.empty()) {
    for (int i = 0; i < pl.nodes; ++i) node_paths.push_back(node_model_path(o, i));
  }
  bool nodes_loaded = false;
  collectively(env.comm(), [&] { nodes_loaded = load_all(nodes.models, node_paths, kind); });
  if (nodes_loaded && std::all_of(nodes.models.begin(), nodes.models.end(),
                                  [](const Model& m) { return m.usable(); })) {
    // The areas the last run chose, when the models carry them (their heights are those of the
    // saved device models); else the models' partition.
    const Sizes chosen = chosen_areas(nodes.models, total);
    nodes.dist = chosen.empty() ? partition(algorithm, nodes.models, total)
                                : evaluate(nodes.models, chosen, algorithm);
  } else {
    nodes.dist = partition_even(nodes.models, total);
    nodes_loaded = false;
  }

  while (nodes.status == DynamicStatus::running && nodes.iterations < o.max_iterations) {
    bool devices_loaded = false;
    HierarchicalStep step =
        measure_step(env, o, algorithm, kind, pl, kernel, nodes.dist.sizes(), devices_loaded);
    step.iteration = nodes.iterations + 1;
    if (out.steps.empty()) out.models_loaded = nodes_loaded && devices_loaded;
    const std::vector<Point> points = node_points(step.areas, step.node_seconds);
    out.steps.push_back(std::move(step));
    partition_step(nodes, points, o.node_eps, o.precision.rel_ci);
    collectively(env.comm(), [&] {
      if (o.models_dir.empty() || env.rank() != 0) return;
      for (int i = 0; i < pl.nodes; ++i) {
        const Model& m = nodes.models[static_cast<std::size_t>(i)];
        if (!m.empty()) save(node_model_path(o, i), m, "one b-wide block of C", o.block);
      }
    });
  }
  if (nodes.status == DynamicStatus::running) {
    nodes.status = DynamicStatus::not_converged;
    if (!nodes.best.parts.empty()) nodes.dist = nodes.best;
  }
  out.status = nodes.status;
  out.areas = nodes.dist.sizes();
  // The devices' columns of the step that measured the chosen areas (the latest one).
  const auto chosen = std::find_if(out.steps.rbegin(), out.steps.rend(),
                                   [&](const auto& s) { return s.target_areas == out.areas; });
  if (chosen == out.steps.rend()) {
    throw Error(ErrorKind::internal,
                "hierarchical partitioning: the chosen areas were never measured");
  }
  out.weights = as_doubles(chosen->columns);
  collectively(env.comm(), [&] {
    if (o.models_dir.empty() || env.rank() != 0) return;
    for (int i = 0; i < pl.nodes; ++i) {
      Model m = nodes.models[static_cast<std::size_t>(i)];
      if (m.empty()) continue;
      m.set_info(chosen_key, std::to_string(out.areas[static_cast<std::size_t>(i)]));
      save(node_model_path(o, i), m, "one b-wide block of C", o.block);
    }
  });
  return out;
}

}  // namespace

HierarchicalPartition partition_hierarchical(Environment& env, const HierarchicalOptions& o,
                                             PanelKernelFactory kernel) {
  check_options(o);
  // Before anything is measured, whichever method uses it (an unknown name was found only when the
  // first partition was computed, and never by the methods that do not partition with models).
  if (!o.algorithm.empty()) check_partitioner(o.algorithm);
  const Timer timer;
  const PhysicalTopology& topo = PhysicalTopology::of(env);
  const Placement pl = place(topo);
  const std::int64_t grid = blocks_of(o.n, o.block);
  const std::int64_t total = checked_mul(grid, grid, "hierarchical partitioning: blocks of C");
  if (!kernel) {
    kernel = [&env, k = o.panel > 0 ? o.panel : o.block](std::int64_t rows,
                                                         std::int64_t unit_columns) {
      return gemm_panel_launch_kernel(env, k, rows, unit_columns);
    };
  }
  if (!o.models_dir.empty()) {
    collectively(env.comm(), [&] {
      if (env.rank() == 0) std::filesystem::create_directories(o.models_dir);
    });
  }

  const auto finish = [&](HierarchicalPartition&& result) {
    result.method = o.method;
    result.node_of_rank = pl.node_of_rank;
    result.spec = fpm::hierarchical_layout_spec(result.areas, o.block, result.weights);
    result.seconds = timer.seconds();
    return std::move(result);
  };
  if (o.method == HierarchicalMethod::homogeneous) {
    HierarchicalPartition out;
    const std::vector<Model> nobody(static_cast<std::size_t>(pl.nodes));
    out.areas = partition_even(nobody, total).sizes();
    out.status = DynamicStatus::converged;
    return finish(std::move(out));
  }
  if (o.method == HierarchicalMethod::single_cpm) {
    return finish(single_cpm(env, o, pl, kernel, total));
  }

  return finish(iterate_levels(env, o, pl, kernel, total));
}

}  // namespace hit::balance
