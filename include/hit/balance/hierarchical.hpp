#pragma once
// Hierarchical partitioning of the column-based matrix product (Clarke, Ilic, Lastovetsky,
// Sousa, Zhong, "Design and optimization of scientific applications for highly heterogeneous
// and hierarchical HPC platforms using functional computation performance models"): INPA over the
// nodes, IDPA over the devices of each node, both with partial functional performance models built
// by running the application's kernel on the devices the run is bound to.
//
//  - Nodes get rectangles of C (in b×b blocks) by the column-based arrangement (columns2d) of
//    areas proportional to their speeds; a node's speed at an area is measured by balancing its
//    own devices on its rectangle (IDPA) and taking their slowest time.
//  - The devices of a node get vertical slices of its rectangle: a 1-D partition of its columns
//    (element columns by default, or b-wide block columns), at the rectangle's height.
//  - Both levels iterate until the measured times agree within their eps.
//
// The pure part (the methods, the layout spec) is the models layer's (hit/fpm/hierarchical.hpp).
// The result is a `hierarchical` layout spec that reproduces the rectangles on a run with the
// same processes and nodes, so any program takes it with --layout. Models are saved to a folder
// and reused on the next run (warm start).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hit/balance/benchmark.hpp"
#include "hit/balance/dynamic_partition.hpp"
#include "hit/fpm/hierarchical.hpp"

namespace hit {
class Environment;
}

namespace hit::balance {

struct HierarchicalOptions {
  std::int64_t n = 0;  // C is n×n elements
  int block = 64;      // b: a node's area unit is one b×b block of C
  // The inner dimension of the measured panel step, C += A(:, k:k+panel)·B(k:k+panel, :): the
  // application's panel width; 0: b.
  int panel = 0;
  // A device's unit: one b-wide block column (true) or one element column (false: a finer
  // balance inside a node; the rectangles' edges stay on block boundaries).
  bool block_columns = false;
  fpm::HierarchicalMethod method = fpm::HierarchicalMethod::fpm;
  double node_eps = 0.05;      // INPA stops when the nodes' times spread ((max−min)/min) <= this
  double device_eps = 0.05;    // IDPA stops when a node's devices' times spread <= this
  int max_iterations = 10;     // INPA steps at most
  int device_iterations = 10;  // IDPA steps at most, per INPA step
  Precision precision;         // of every device measurement
  // The partitioner of both levels; empty: geometric (fpm) or proportional (the CPM methods).
  std::string algorithm;
  // A folder for the models (created if missing): node models `node-<i>-b<b>-p<panel>.csv` and
  // device models `device-<node>-<j>-b<b>-p<panel>-rows<r>-unit<u>.csv` are read at the start
  // when present (the first step then starts from their partition) and written after every step.
  // Empty: none.
  std::string models_dir;
};

// A device kernel of one panel step at a height of `rows` elements, one unit being `unit_columns`
// columns; the default is gemm_panel_launch_kernel(env, panel, rows, unit_columns).
using PanelKernelFactory =
    std::function<BenchmarkKernel(std::int64_t rows, std::int64_t unit_columns)>;

struct HierarchicalStep {
  int iteration = 0;
  std::vector<std::int64_t> target_areas;  // per node: the areas asked of columns2d (blocks)
  std::vector<std::int64_t> areas;         // per node: the rectangle's area in blocks, realised
  std::vector<double> node_seconds;        // per node: the slowest device after IDPA
  std::vector<std::int64_t> columns;       // per rank: device units (columns) of its slice
  std::vector<double> device_seconds;      // per rank: its last measured time (0: no work)
  std::vector<int> device_iterations;      // per node: IDPA steps taken
  std::vector<std::string> device_status;  // per node: how IDPA ended
  double spread = 0;                       // of node_seconds
};

struct [[nodiscard]] HierarchicalPartition {
  fpm::HierarchicalMethod method = fpm::HierarchicalMethod::fpm;
  Spec spec;  // the layout: hierarchical:nodes=(columns2d:...),...
  DynamicStatus status = DynamicStatus::converged;
  std::vector<int> node_of_rank;    // node index (0 .. nodes−1, by first rank) of every rank
  std::vector<std::int64_t> areas;  // per node, of the chosen step (target areas)
  std::vector<double> weights;      // per rank: the device weights the spec carries
  std::vector<HierarchicalStep> steps;
  double seconds = 0;          // wall time spent (measuring and partitioning)
  bool models_loaded = false;  // every model of the first step came from models_dir
};

// Collective over env.comm(). Every rank must be bound (PhysicalTopology::of(env)); nodes are
// the run's (shared-memory nodes or HIT_NODES). Errors: Error(invalid_argument) for n < 1, a block
// outside 1..4096, a panel
// outside 0..4096, eps < 0 or iterations < 1; a failure on any rank (a device too small, a model
// file that cannot be read or written) is thrown on every rank.
HierarchicalPartition partition_hierarchical(Environment& env, const HierarchicalOptions& options,
                                             PanelKernelFactory kernel = {});

}  // namespace hit::balance
