#include "cannon.hpp"

#include <cblas.h>

#include <cmath>
#include <limits>
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

namespace hit::cannon {
namespace {

// The serial reference of --check: one BLAS call on rank 0, independent of the device layer.
template <class T>
void serial_product(const Tile<T>& a, const Tile<T>& b, Tile<T>& c) {
  const auto rows = static_cast<int>(c.shape().extent(0));
  const auto cols = static_cast<int>(c.shape().extent(1));
  const auto inner = static_cast<int>(a.shape().extent(1));
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, inner, 1.0, a.data(),
                static_cast<int>(a.step(0)), b.data(), static_cast<int>(b.step(0)), 0.0, c.data(),
                static_cast<int>(c.step(0)));
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, inner, 1.0f, a.data(),
                static_cast<int>(a.step(0)), b.data(), static_cast<int>(b.step(0)), 0.0f, c.data(),
                static_cast<int>(c.step(0)));
  }
}

// The one local operation of the algorithm, C += A·B, launched on the rank's device. The padded
// blocks travel whole: their padding is zero, so the padded part of the inner dimension adds
// nothing. Returns the launch's time (device lock wait excluded).
template <class T>
double local_multiply(const Kernel<View<const T>, View<const T>, View<T>>& gemm,
                      const Partition& part, const Tile<T>& a, const Tile<T>& b, Tile<T>& c) {
  return launch(gemm, part, in(a.padded()), in(b.padded()), inout(c)).seconds;
}

// Cannon is correct only when the blocks line up: A's row blocks are C's, B's column blocks are
// C's, A's column blocks are B's row blocks, and every process of the active grid holds all three.
void check_compatible(const Layout& a, const Layout& b, const Layout& c, const Options& o) {
  const int side = c.topology().dims()[0];
  const int ext[6] = {a.active_extent(0), a.active_extent(1), b.active_extent(0),
                      b.active_extent(1), c.active_extent(0), c.active_extent(1)};
  for (int e : ext) {
    if (e != ext[0]) {
      throw Error(ErrorKind::shape,
                  "Cannon needs every process of the active grid to hold a block of A, B and C; "
                  "with n=" +
                      std::to_string(o.n) + " m=" + std::to_string(o.m) +
                      " k=" + std::to_string(o.k) + " on a " + std::to_string(side) + "x" +
                      std::to_string(side) + " grid the layouts leave " +
                      "some without (use fewer processes or larger sizes)");
    }
  }
  const Topology& topo = c.topology();
  for (const Layout* l : {&a, &b, &c}) {
    for (int p = 0; p < topo.grid_size(); ++p) {
      if (l->blocks(p).size() > 1) {
        throw Error(ErrorKind::invalid_argument,
                    "Cannon needs layouts with one block per process; '" + l->spec() +
                        "' gives rank " + std::to_string(p) + " " +
                        std::to_string(l->blocks(p).size()) + " blocks");
      }
    }
  }
  for (int p = 0; p < topo.grid_size(); ++p) {
    if (!c.active(p)) continue;
    const Shape bc = c.block(p);
    const Shape ba = a.block(p);
    const Shape bb = b.block(p);
    if (!(ba[0] == bc[0])) {
      throw Error(ErrorKind::shape, "Cannon needs A's row blocks to equal C's: rank " +
                                        std::to_string(p) + " has A " + ba.str() + " and C " +
                                        bc.str() + " (layouts '" + a.spec() + "', '" + c.spec() +
                                        "')");
    }
    if (!(bb[1] == bc[1])) {
      throw Error(ErrorKind::shape, "Cannon needs B's column blocks to equal C's: rank " +
                                        std::to_string(p) + " has B " + bb.str() + " and C " +
                                        bc.str() + " (layouts '" + b.spec() + "', '" + c.spec() +
                                        "')");
    }
    // A(i, j) and B(j, i) hold the same slice of the inner dimension.
    const Index coords = topo.coords(p);
    const int q = topo.proc_at(Index{coords[1], coords[0]});
    if (!(ba[1] == b.block(q)[0])) {
      throw Error(ErrorKind::shape, "Cannon needs A's column blocks to equal B's row blocks: A " +
                                        ba.str() + " (rank " + std::to_string(p) + ") vs B " +
                                        b.block(q).str() + " (rank " + std::to_string(q) +
                                        ") (layouts '" + a.spec() + "', '" + b.spec() + "')");
    }
  }
}

template <class T>
void fill_generated(Tile<T>& tile, std::uint64_t seed) {
  if (tile.is_null()) return;
  tile.for_each([&](const Index& i, T& v) {
    v = static_cast<T>(app::hashed_value(seed, static_cast<std::uint64_t>(i[0]),
                                         static_cast<std::uint64_t>(i[1])));
  });
}

template <class T>
Tile<T> tile_for(const Layout& layout, int rank, bool padded) {
  const Shape block = layout.block(rank);
  if (block.is_null() || block.empty()) return Tile<T>();
  TileOptions options;
  if (padded) options.max_shape = layout.max_extents();
  return Tile<T>(block, options);
}

template <class T>
int run_typed(Environment& env, const Options& o) {
  const int rank = env.rank();
  const Shape shape_a = Shape::extents({o.n, o.m});
  const Shape shape_b = Shape::extents({o.m, o.k});
  const Shape shape_c = Shape::extents({o.n, o.k});
  const Topology topo = topology("square");
  // The physical topology and the device binding (collective on first use).
  const std::vector<DeviceBinding> devices = PhysicalTopology::of(env).bindings();
  const Layout lay_a = layout(o.layout_a, topo, shape_a, "a", devices);
  const Layout lay_b = layout(o.layout_b, topo, shape_b, "b", devices);
  const Layout lay_c = layout(o.layout_c, topo, shape_c, "c", devices);
  check_compatible(lay_a, lay_b, lay_c, o);
  // Only rank 0 writes; a failure there is agreed so no rank waits in a collective.
  collectively(env.comm(), [&] {
    if (!o.svg.empty() && rank == 0) {
      write_file_atomically(
          o.svg, app::side_by_side_svg({layout_svg(lay_a, "A (" + lay_a.spec() + ")", devices),
                                        layout_svg(lay_b, "B (" + lay_b.spec() + ")", devices),
                                        layout_svg(lay_c, "C (" + lay_c.spec() + ")", devices)}));
    }
  });

  // Tiles: A and B padded to their layout's largest block, so every shifted block fits.
  Tile<T> a = tile_for<T>(lay_a, rank, true);
  Tile<T> b = tile_for<T>(lay_b, rank, true);
  Tile<T> c = tile_for<T>(lay_c, rank, false);
  if (!o.a_file.empty()) {
    read_raw(o.a_file, shape_a, a, env.comm());
  } else {
    fill_generated(a, o.seed);
  }
  if (!o.b_file.empty()) {
    read_raw(o.b_file, shape_b, b, env.comm());
  } else {
    fill_generated(b, o.seed + 1);
  }
  const Tile<T> a0 = a.is_null() ? Tile<T>() : a.clone();
  const Tile<T> b0 = b.is_null() ? Tile<T>() : b.clone();

  // Communication, built once from the layouts: the initial alignment (row i of A moves i places
  // back, column j of B moves j places up) and the per-step shift of one place.
  const bool active = rank < topo.grid_size() && lay_c.active(rank);
  const Index coords = rank < topo.grid_size() ? topo.coords(rank) : Index{0, 0};
  Comm align_a = shift(lay_a, 1, -static_cast<int>(coords[0]), a);
  Comm align_b = shift(lay_b, 0, -static_cast<int>(coords[1]), b);
  Pattern step_shift(Pattern::Order::unordered);
  step_shift.add(shift(lay_a, 1, -1, a)).add(shift(lay_b, 0, -1, b));
  const int steps = std::max(lay_a.active_extent(1), lay_b.active_extent(0));
  const auto gemm = gemm_accumulate<T>();
  const Partition part =
      active ? partition(env, o.partition, c.shape(), gemm.access(), {}, "c") : Partition();

  app::RankStats stats;
  const std::vector<double> times = app::timed_repetitions(
      env.comm(), o.warmup, o.reps, stats,
      [&](int rep) {
        if (rep > 0) {
          // Whole padded buffers: after the shifts the padding holds other blocks' wider data.
          if (!a.is_null()) a.padded().copy_from(a0.padded());
          if (!b.is_null()) b.padded().copy_from(b0.padded());
        }
        if (!c.is_null()) c.fill(T(0));
      },
      [&](double& compute, double& comm) {
        Timer t;
        align_a.start();
        align_b.start();
        align_a.wait();
        align_b.wait();
        comm += t.seconds();
        for (int s = 0; s < steps; ++s) {
          if (active) compute += local_multiply(gemm, part, a, b, c);
          if (s + 1 < steps) {  // the last step is unrolled: no shift after the last product
            t.restart();
            step_shift.run();
            comm += t.seconds();
          }
        }
      });
  stats.work = c.is_null() ? 0.0 : 2.0 * static_cast<double>(c.size()) * static_cast<double>(o.m);

  if (!o.c_out.empty()) write_raw(o.c_out, shape_c, c, env.comm());

  app::CheckResult check;
  if (o.check) {
    check.ran = true;
    // Serial reference on rank 0 from the same inputs.
    Tile<T> whole_a = rank == 0 ? Tile<T>(shape_a) : Tile<T>();
    Tile<T> whole_b = rank == 0 ? Tile<T>(shape_b) : Tile<T>();
    Tile<T> whole_c = rank == 0 ? Tile<T>(shape_c) : Tile<T>();
    if (!o.a_file.empty()) {
      read_raw(o.a_file, shape_a, whole_a, env.comm());
    } else {
      fill_generated(whole_a, o.seed);
    }
    if (!o.b_file.empty()) {
      read_raw(o.b_file, shape_b, whole_b, env.comm());
    } else {
      fill_generated(whole_b, o.seed + 1);
    }
    gather(lay_c, c, 0, whole_c).run();
    double err = 0;
    if (rank == 0) {
      Tile<T> ref(shape_c);
      serial_product(whole_a, whole_b, ref);
      double scale = 0;
      double diff = 0;
      const std::vector<T> got = whole_c.to_vector();
      const std::vector<T> want = ref.to_vector();
      for (std::size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, std::abs(static_cast<double>(want[i])));
        const double d = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
        diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
      }
      err = diff / std::max(scale, std::numeric_limits<double>::min());
    }
    MPI_Bcast(&err, 1, MPI_DOUBLE, 0, env.comm());
    const double tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-4;
    check.max_rel_error = err;
    check.passed = err <= tolerance;
  }

  const auto all = app::gather_stats(stats, env.comm());
  const auto labels = app::gather_labels(device(env).label(), env.comm());
  if (rank == 0) {
    const double t = app::median(times);
    const double flops =
        2.0 * static_cast<double>(o.n) * static_cast<double>(o.m) * static_cast<double>(o.k);
    nlohmann::json devices_json = labels;
    nlohmann::json result = {
        {"app", "cannon"},
        {"n", o.n},
        {"m", o.m},
        {"k", o.k},
        {"type", o.type},
        {"ranks", env.size()},
        {"grid", {topo.dims()[0], topo.dims()[1]}},
        {"devices", devices_json},
        {"layouts", {{"a", lay_a.spec()}, {"b", lay_b.spec()}, {"c", lay_c.spec()}}},
        {"partition", part.spec().empty() ? o.partition : part.spec()},
        {"reps", o.reps},
        {"time_s", t},
        {"time_min_s", *std::min_element(times.begin(), times.end())},
        {"time_max_s", *std::max_element(times.begin(), times.end())},
        {"gflops", t > 0 ? flops / t * 1e-9 : 0.0},
        {"check", check.json()},
        {"per_rank", app::stats_json(all, "flops")},
        {"imbalance", app::imbalance(all)},
    };
    if (o.json) {
      app::print_json(result);
    } else {
      std::printf(
          "hit-cannon: C(%ldx%ld) = A(%ldx%ld) * B(%ldx%ld), %s, %d ranks on a %dx%d grid\n", o.n,
          o.k, o.n, o.m, o.m, o.k, o.type.c_str(), env.size(), topo.dims()[0], topo.dims()[1]);
      std::printf("  layouts: A %s, B %s, C %s\n", lay_a.spec().c_str(), lay_b.spec().c_str(),
                  lay_c.spec().c_str());
      std::printf(
          "  time %.4f s (median of %d, min %.4f, max %.4f), %.2f GFLOP/s, imbalance %.3f\n", t,
          o.reps, result["time_min_s"].get<double>(), result["time_max_s"].get<double>(),
          result["gflops"].get<double>(), result["imbalance"].get<double>());
      for (std::size_t r = 0; r < all.size(); ++r) {
        std::printf("  rank %zu (%s): compute %.4f s, comm %.4f s\n", r,
                    devices_json[r].get<std::string>().c_str(), all[r].compute_s, all[r].comm_s);
      }
      if (check.ran) {
        std::printf("  check: %s (max relative error %.3g)\n", check.passed ? "passed" : "FAILED",
                    check.max_rel_error);
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

}  // namespace hit::cannon
