#pragma once
// One clusterCL workload's run (clustercl_apps.cpp): its arrays (by rows of --layout, or whole on
// every process), generated from --seed or read by --input; one hit::WorkPackages per kernel
// (kept across repetitions, so each is tuned and measured once); what every run of a repetition
// did, added up; the merges between kernels; the outputs written by --output.

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "../common/values.hpp"
#include "clustercl_apps.hpp"
#include "hit/hit.hpp"
#include "hit/tile_io.hpp"
#include "hit/work_packages.hpp"

namespace hit::packages {

template <class T>
struct JobArray {
  WorkloadArray spec;
  Shape shape;
  Tile<T> tile;  // this process's rows (null: none), or the whole array
};

// The layout of an array laid out by rows, checked to give each process whole rows.
inline Layout rows_layout(Environment& env, const Options& o, const Shape& shape) {
  Layout l = layout(o.layout, topology("array"), shape);
  collectively(env.comm(), [&] {
    const LocalPart mine = l.local();
    const bool whole_rows = mine.blocks.size() <= 1 && (mine.blocks.empty() || shape.rank() == 1 ||
                                                        mine.blocks.front()[1] == shape[1]);
    if (!whole_rows) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("layout {} does not give rank {} one block of whole rows of {}",
                              l.spec(), env.rank(), shape.str()));
    }
  });
  return l;
}

// The generated value of element `k` of input `a` (the workload's a-th array): uniform in
// [-1, 1), mapped where the workload needs a range (prices, maturities, atoms in the box).
inline double generated(const WorkloadSpec& spec, std::size_t a, const Shape& grid,
                        std::uint64_t seed, const Index& k) {
  const auto i = static_cast<std::uint64_t>(k[0]);
  const auto j = static_cast<std::uint64_t>(k.rank() > 1 ? k[1] : 0);
  const double v = app::hashed_value(seed + 7919 * (a + 1), i, j);
  const std::string& name = spec.arrays[a].name;
  if (spec.name == "bsm" || spec.name == "bop") return name == "t" ? 1.05 + 0.95 * v : 100 + 50 * v;
  if (spec.name == "dcs" && name == "atoms") {
    const double h = spec.params.at("h");
    if (j == 0) return 0.5 * (v + 1) * h * static_cast<double>(grid.extent(0));
    if (j == 1) return 0.5 * (v + 1) * h * static_cast<double>(grid.extent(1));
    return j == 2 ? 0.5 * (v + 1) : v;  // z in [0, 1), below the plane z0; the charge
  }
  return v;
}

// An array laid out by rows made whole on every process: each process's rows, zeros elsewhere,
// summed by one reduction (collective).
template <class T>
void make_whole(const Tile<T>& part, Tile<T>& whole) {
  whole.fill(T(0));
  if (!part.is_null()) part.for_each([&](const Index& k, const T& v) { whole(k) = v; });
  allreduce(whole, ReduceOp::sum);
}

template <class T>
struct Job {
  Job(Environment& e, const Options& opts, const WorkloadSpec& s, PackageOptions p)
      : env(e), o(opts), spec(s), options(p) {}

  Environment& env;
  const Options& o;
  const WorkloadSpec& spec;
  PackageOptions options;
  std::map<std::string, JobArray<T>> arrays;
  std::map<std::string, Tile<T>> scratch;
  std::map<std::string, std::unique_ptr<WorkPackages>> packages;  // by kernel (and side)
  // The last repetition, on this process: every run's report added up (records on one clock
  // from the repetition's start), the rows and packages it computed, the merges' time, the span.
  PackageReport total;
  std::int64_t rows_computed = 0;
  double merge_s = 0;
  double span_s = 0;
  double start = 0;

  JobArray<T>& at(const std::string& name) { return arrays.at(name); }
  Tile<T>& tile(const std::string& name) { return arrays.at(name).tile; }
  T param(const std::string& name) const { return static_cast<T>(spec.params.at(name)); }

  void make_arrays() {
    check_names();
    for (std::size_t a = 0; a < spec.arrays.size(); ++a) {
      const WorkloadArray& w = spec.arrays[a];
      JobArray<T> arr{w, w.shape, {}};
      arr.tile = w.by_rows ? Tile<T>::of(rows_layout(env, o, w.shape)) : Tile<T>(w.shape);
      if (!w.output) fill_input(arr, a);
      arrays.emplace(w.name, std::move(arr));
    }
    clear_outputs();
  }

  void clear_outputs() {
    for (auto& [name, a] : arrays) {
      if (a.spec.output && !a.tile.is_null()) a.tile.fill(T(0));
    }
  }

  Tile<T>& scratch_rows(const std::string& name, const Shape& shape) {
    auto it = scratch.find(name);
    if (it == scratch.end())
      it = scratch.emplace(name, Tile<T>::of(rows_layout(env, o, shape))).first;
    return it->second;
  }
  Tile<T>& scratch_whole(const std::string& name, const Shape& shape) {
    auto it = scratch.find(name);
    if (it == scratch.end()) it = scratch.emplace(name, Tile<T>(shape)).first;
    return it->second;
  }

  void begin_repetition() {
    total = PackageReport{};
    rows_computed = 0;
    merge_s = 0;
    start = MPI_Wtime();
  }
  void end_repetition() { span_s = allreduce(MPI_Wtime() - start, ReduceOp::max); }

  // One kernel over `domain` as work packages (the package size capped at the domain's rows).
  template <class K, class... A>
  void run(const std::string& key, const Shape& domain, const K& kernel, A&&... args) {
    auto& p = packages[key];
    if (!p) {
      PackageOptions opts = options;
      opts.size = std::min(opts.size, domain.extent(0));
      p = std::make_unique<WorkPackages>(
          env, domain, opts, partition(o.run.partition, domain, {.access = kernel.access()}));
    }
    const double offset = MPI_Wtime() - start;
    add(p->run(kernel, std::forward<A>(args)...), *p, offset);
  }

  // An array laid out by rows made whole on every process (the barrier between kernels).
  void merge(const Tile<T>& part, Tile<T>& whole) {
    const Timer t;
    make_whole(part, whole);
    merge_s += t.seconds();
  }

  void write_outputs() {
    for (const auto& [name, path] : o.outputs) {
      const JobArray<T>& a = at(name);
      if (a.spec.by_rows) {
        write(path, a.shape, a.tile, env.comm());
      } else {
        write(path, a.shape, env.rank() == 0 ? a.tile : Tile<T>(), env.comm());
      }
    }
  }

 private:
  void add(const PackageReport& r, const WorkPackages& p, double offset) {
    total.busy_s += r.busy_s;
    total.wall_s += r.wall_s;
    total.stolen += r.stolen;
    total.bytes_fetched += r.bytes_fetched;
    total.bytes_returned += r.bytes_returned;
    total.overlapped += r.overlapped;
    total.h2d_bytes += r.h2d_bytes;
    total.d2h_bytes += r.d2h_bytes;
    total.evictions += r.evictions;
    total.evicted_bytes += r.evicted_bytes;
    total.max_ahead = std::max(total.max_ahead, r.max_ahead);
    total.rounds = std::max(total.rounds, r.rounds);
    total.device_failed = total.device_failed || r.device_failed;
    total.withdrawn = total.withdrawn || r.withdrawn;
    if (total.failure.empty()) total.failure = r.failure;
    total.abandoned.insert(total.abandoned.end(), r.abandoned.begin(), r.abandoned.end());
    for (PackageRecord rec : r.computed) {
      rows_computed += p.rows(rec).extent(0);
      rec.start_s += offset;
      rec.end_s += offset;
      total.computed.push_back(rec);
    }
  }

  // Every --input and --output names an array of the right role; every output can be written.
  void check_names() {
    const auto role_of = [&](const std::string& name) -> int {
      for (const WorkloadArray& w : spec.arrays) {
        if (w.name == name) return w.output ? 1 : 0;
      }
      return -1;
    };
    std::string names;
    for (const WorkloadArray& w : spec.arrays)
      names += (names.empty() ? "" : ", ") + w.name + (w.output ? " (out)" : " (in)");
    collectively(env.comm(), [&] {
      for (const auto& [flag, given, role] :
           {std::tuple{"--input", &o.inputs, 0}, std::tuple{"--output", &o.outputs, 1}}) {
        for (const auto& [name, path] : *given) {
          if (role_of(name) != role) {
            throw Error(
                ErrorKind::invalid_argument,
                fmt::format("{} {}={}: workload {} has no {} array '{}' (its arrays: {})", flag,
                            name, path, spec.name, role == 0 ? "input" : "output", name, names));
          }
          if (role == 1 && env.rank() == 0) check_output_array(path, "--output " + name);
        }
      }
    });
  }

  void fill_input(JobArray<T>& arr, std::size_t a) {
    const auto file = o.inputs.find(arr.spec.name);
    if (file == o.inputs.end()) {
      const Shape& grid = spec.name == "dcs" ? spec.arrays[1].shape : arr.shape;
      if (!arr.tile.is_null()) {
        arr.tile.for_each([&](const Index& k, T& v) {
          v = static_cast<T>(generated(spec, a, grid, o.run.seed, k));
        });
      }
      return;
    }
    read(file->second, arr.shape, arr.tile, env.comm());
    check_finite(file->second, arr.shape, arr.tile, env.comm(), "--input " + arr.spec.name);
  }
};

}  // namespace hit::packages
