#pragma once
// Virtual topologies (docs/layouts.md): the logical processes (MPI ranks) arranged as a grid of
// coordinates, built by topology plug-ins chosen by name (`square`, `mesh2d`, `array`, `mesh`).
//
// A Topology is a small value type, identical on every rank. Its grid may be smaller than the
// number of processes: the processes past the grid (ranks >= grid_size()) are inactive, as in
// Hitmap. Coordinates are row-major: proc = ((c0 * d1) + c1) * d2 + c2 ..., the last axis varying
// fastest.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/registry.hpp"
#include "hit/core/spec.hpp"
#include "hit/shape.hpp"

namespace hit {

class Environment;

class Topology {
 public:
  Topology() = default;
  // `dims`: 1 to 8 axes, each >= 1, with product(dims) <= procs; throws Error(topology) otherwise.
  Topology(std::string name, std::vector<int> dims, int procs);

  const std::string& name() const noexcept { return name_; }
  const std::vector<int>& dims() const noexcept { return dims_; }
  int axes() const noexcept { return static_cast<int>(dims_.size()); }
  int procs() const noexcept { return procs_; }
  int grid_size() const noexcept { return grid_size_; }  // product of dims()
  int dim(int axis) const;                               // checked dims()[axis]

  // Whether `proc` has a place in the grid (0 <= proc < grid_size()); false past procs() too.
  bool active(int proc) const noexcept { return proc >= 0 && proc < grid_size_; }

  // The coordinates of `proc`; an Index of rank 0 for an inactive proc. Error for proc outside
  // [0, procs()).
  Index coords(int proc) const;
  // The proc at `coords` (rank axes(), each inside the grid); Error(topology) otherwise.
  int proc_at(const Index& coords) const;

  // The proc `offset` steps away from `proc` along `axis`: with `wrap` cyclically, without it
  // nullopt past the edge. nullopt for an inactive proc.
  std::optional<int> neighbor(int proc, int axis, int offset, bool wrap) const;

  // e.g. "mesh2d 3x2 (6 procs)", "square 2x2 (5 procs, 1 inactive)".
  std::string str() const;

  friend bool operator==(const Topology& a, const Topology& b) {
    return a.name_ == b.name_ && a.dims_ == b.dims_ && a.procs_ == b.procs_;
  }

 private:
  void check_proc(int proc) const;
  void check_axis(int axis) const;

  std::string name_;
  std::vector<int> dims_;
  int procs_ = 0;
  int grid_size_ = 0;
};

// A virtual topology plug-in: arranges `procs` processes as a grid.
class TopologyPlugin {
 public:
  virtual ~TopologyPlugin() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<ParamInfo> params() const = 0;
  // `spec` has been checked against params(). Throws Error(topology) when `procs` does not fit.
  virtual Topology make(int procs, const Spec& spec) const = 0;
};

// The topology plug-ins of a run: the built-in ones, plus those added by external plug-ins
// (`env.extension<TopologyRegistry>().add(...)` from hit_plugin_register).
class TopologyRegistry : public Registry<TopologyPlugin> {
 public:
  explicit TopologyRegistry(Environment& env);
};

// Builds the topology named by `spec` for `procs` processes (the registry of the one Environment).
[[nodiscard]] Topology topology(std::string_view spec, int procs);
// procs = Environment::current().size().
[[nodiscard]] Topology topology(std::string_view spec);

// The most-square factorisation of `procs` into `axes` factors, non-increasing (as
// MPI_Dims_create): 6 -> {3, 2}, 12 over 3 axes -> {3, 2, 2}, 7 -> {7, 1}.
[[nodiscard]] std::vector<int> balanced_dims(int procs, int axes);

namespace detail {
// Defined with the built-in plug-ins (plugins/topologies/builtin.cpp).
void register_builtin_topologies(TopologyRegistry& registry);
}  // namespace detail

}  // namespace hit
