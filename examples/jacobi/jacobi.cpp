#include "jacobi.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../common/app.hpp"
#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/core/program.hpp"
#include "hit/core/timer.hpp"
#include "hit/device.hpp"
#include "hit/device_binding.hpp"
#include "hit/kernel.hpp"
#include "hit/layout.hpp"
#include "hit/layout_svg.hpp"
#include "hit/partition.hpp"
#include "hit/physical_topology.hpp"
#include "hit/tile.hpp"
#include "hit/tile_io.hpp"
#include "hit/topology.hpp"

namespace hit::jacobi {
namespace {

// Initial field: the top edge is held at 1, the other edges at a gentle ramp, the inside at 0.
template <class T>
T initial_value(index_t i, index_t j, index_t n) {
  if (i == 0) return T(1);
  if (i == n - 1 || j == 0 || j == n - 1)
    return static_cast<T>(static_cast<double>(i) / static_cast<double>(n));
  return T(0);
}

// The serial reference of --check: one sweep over the whole grid, interior points the mean of
// their neighbours, boundary points copied. The expression and its order are those of the
// device kernel (hit::jacobi5), so a correct distributed run agrees bit for bit.
template <class T>
void sweep(const Tile<T>& in, Tile<T>& out, index_t n) {
  const Shape& s = out.shape();
  const index_t i0 = s[0].begin();
  const index_t rows = s.extent(0);
  const index_t j0 = s[1].begin();
  const index_t cols = s.extent(1);
  const index_t in_step = in.step(0);
  const index_t out_step = out.step(0);
  const index_t jlo = std::max<index_t>(j0, 1) - j0;             // first interior column, local
  const index_t jhi = std::min<index_t>(j0 + cols, n - 1) - j0;  // one past the last
  for (index_t r = 0; r < rows; ++r) {
    const index_t i = i0 + r;
    const T* c = in.data() + r * in_step;
    T* o = out.data() + r * out_step;
    if (i == 0 || i == n - 1 || jlo >= jhi) {
      std::memcpy(o, c, static_cast<std::size_t>(cols) * sizeof(T));
      continue;
    }
    const T* up = c - in_step;
    const T* down = c + in_step;
    for (index_t j = 0; j < jlo; ++j) o[j] = c[j];
    for (index_t j = jlo; j < jhi; ++j) o[j] = T(0.25) * (up[j] + down[j] + c[j - 1] + c[j + 1]);
    for (index_t j = jhi; j < cols; ++j) o[j] = c[j];
  }
}

template <class T>
double max_change(const Tile<T>& a, const Tile<T>& b) {
  double m = 0;
  if (a.is_null()) return m;
  const Shape& s = a.shape();
  for (index_t r = 0; r < s.extent(0); ++r) {
    const T* x = a.data() + r * a.step(0);
    const T* y = b.data() + r * b.step(0);
    for (index_t j = 0; j < s.extent(1); ++j) {
      m = std::max(m, std::abs(static_cast<double>(x[j]) - static_cast<double>(y[j])));
    }
  }
  return m;
}

template <class T>
void initialise(Tile<T>& t, index_t n) {
  if (t.is_null()) return;
  t.for_each([&](const Index& i, T& v) { v = initial_value<T>(i[0], i[1], n); });
}

template <class T>
int run_typed(Environment& env, const Options& o) {
  const int rank = env.rank();
  const Shape grid = Shape::extents({o.n, o.n});
  const Topology topo = topology(o.topology);
  // The physical topology and the device binding (collective on first use).
  const std::vector<DeviceBinding> devices = PhysicalTopology::of(env).bindings();
  const Layout lay = layout(o.layout, topo, grid, "grid", devices);
  if (lay.blocks(rank < lay.procs() ? rank : 0).size() > 1) {
    throw Error(
        ErrorKind::invalid_argument,
        "hit-jacobi needs a layout with one block per rank; '" + lay.spec() + "' gives several");
  }
  // Only rank 0 writes; a failure there is agreed so no rank waits in a collective.
  collectively(env.comm(), [&] {
    if (!o.svg.empty() && rank == 0) {
      write_file_atomically(o.svg, layout_svg(lay, "Jacobi grid (" + lay.spec() + ")", devices));
    }
  });
  const Shape block = rank < lay.procs() ? lay.block(rank) : Shape();
  const bool active = !block.is_null() && !block.empty();
  TileOptions with_ghosts;
  with_ghosts.ghost = 1;
  Tile<T> u = active ? Tile<T>(block, with_ghosts) : Tile<T>();
  Tile<T> v = active ? Tile<T>(block, with_ghosts) : Tile<T>();
  // Two halos, one per buffer: the buffers swap roles every iteration.
  Comm halo_u = halo(lay, u, 1);
  Comm halo_v = halo(lay, v, 1);
  // The device updates the interior points of the block; boundary points never change and are
  // already in both buffers.
  const auto kernel = jacobi5<T>();
  const Shape interior = Shape::extents({o.n - 2, o.n - 2}).displace(Index{1, 1});
  const Shape domain = active ? block.intersect(interior) : Shape();
  const bool computes = active && !domain.empty();
  const Partition part =
      computes ? partition(env, o.partition, domain, kernel.access(), {}, "grid") : Partition();

  app::RankStats stats;
  double residual = 0;
  const std::vector<double> times = app::timed_repetitions(
      env.comm(), o.warmup, o.reps, stats,
      [&](int) {
        initialise(u, o.n);
        initialise(v, o.n);
      },
      [&](double& compute, double& comm) {
        for (int it = 0; it < o.iters; ++it) {
          Tile<T>& cur = (it % 2 == 0) ? u : v;
          Tile<T>& nxt = (it % 2 == 0) ? v : u;
          Timer t;
          (it % 2 == 0 ? halo_u : halo_v).run();
          comm += t.seconds();
          if (computes) compute += launch(kernel, part, in(cur), out(nxt)).seconds;
        }
      });
  Tile<T>& result = (o.iters % 2 == 0) ? u : v;
  Tile<T>& previous = (o.iters % 2 == 0) ? v : u;
  residual = allreduce(o.iters > 0 ? max_change(result, previous) : 0.0, ReduceOp::max);
  double local_sum = 0;
  if (active) {
    result.for_each([&](const Index&, T& x) { local_sum += static_cast<double>(x); });
  }
  const double checksum = allreduce(local_sum, ReduceOp::sum);
  stats.work = active ? static_cast<double>(block.size()) : 0.0;

  if (!o.out.empty()) write_raw(o.out, grid, result, env.comm());

  app::CheckResult check;
  if (o.check) {
    check.ran = true;
    Tile<T> whole = rank == 0 ? Tile<T>(grid) : Tile<T>();
    gather(lay, result, 0, whole).run();
    double err = 0;
    if (rank == 0) {
      TileOptions g;
      g.ghost = 1;
      Tile<T> a(grid, g);
      Tile<T> b(grid, g);
      initialise(a, o.n);
      initialise(b, o.n);
      for (int it = 0; it < o.iters; ++it) sweep(it % 2 == 0 ? a : b, it % 2 == 0 ? b : a, o.n);
      const Tile<T>& ref = (o.iters % 2 == 0) ? a : b;
      std::size_t differ = 0;
      const std::vector<T> got = whole.to_vector();
      const std::vector<T> want = ref.to_vector();
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
          ++differ;
          err = std::max(err, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
        }
      }
      if (differ > 0 && err == 0)
        err = 1;  // NaN patterns or signed zeros differ: not bitwise equal
    }
    MPI_Bcast(&err, 1, MPI_DOUBLE, 0, env.comm());
    check.max_rel_error = err;
    check.passed = err == 0;
  }

  const auto all = app::gather_stats(stats, env.comm());
  const auto labels = app::gather_labels(device(env).label(), env.comm());
  if (rank == 0) {
    const double t = app::median(times);
    const double cells = static_cast<double>(o.n - 2) * static_cast<double>(o.n - 2) * o.iters;
    nlohmann::json devices_json = labels;
    nlohmann::json result_json = {
        {"app", "jacobi"},
        {"n", o.n},
        {"iters", o.iters},
        {"type", o.type},
        {"ranks", env.size()},
        {"topology", {{"name", topo.name()}, {"dims", topo.dims()}}},
        {"devices", devices_json},
        {"layout", lay.spec()},
        {"partition", computes ? part.spec() : o.partition},
        {"reps", o.reps},
        {"time_s", t},
        {"time_min_s", *std::min_element(times.begin(), times.end())},
        {"time_max_s", *std::max_element(times.begin(), times.end())},
        {"mcells_per_s", t > 0 ? cells / t * 1e-6 : 0.0},
        {"residual", residual},
        {"checksum", checksum},
        {"check", check.json()},
        {"per_rank", app::stats_json(all, "cells")},
        {"imbalance", app::imbalance(all)},
    };
    if (o.json) {
      app::print_json(result_json);
    } else {
      std::printf("hit-jacobi: %ldx%ld grid, %d iterations, %s, %d ranks (%s)\n", o.n, o.n, o.iters,
                  o.type.c_str(), env.size(), lay.spec().c_str());
      std::printf("  time %.4f s (median of %d), %.1f Mcells/s, residual %.3e, checksum %.10g\n", t,
                  o.reps, result_json["mcells_per_s"].get<double>(), residual, checksum);
      for (std::size_t r = 0; r < all.size(); ++r) {
        std::printf("  rank %zu (%s): compute %.4f s, comm %.4f s, %.0f cells\n", r,
                    labels[r].c_str(), all[r].compute_s, all[r].comm_s, all[r].work);
      }
      if (check.ran) {
        std::printf("  check: %s\n", check.passed ? "bit-for-bit equal to the serial run"
                                                  : "FAILED: differs from the serial run");
      }
    }
  }
  return (check.ran && !check.passed) ? exit_check_failed : exit_ok;
}

}  // namespace

int run(Environment& env, const Options& o) {
  if (o.type == "float") return run_typed<float>(env, o);
  return run_typed<double>(env, o);
}

}  // namespace hit::jacobi
