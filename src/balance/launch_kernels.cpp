// Benchmark kernels run through hit::launch (docs/fpm.md "Building models"): the tiles live on the
// host, every run stages them on the rank's device, executes the built-in kernel and copies the
// result back, and the run's time is that of its launch records — so an emulated device's slowdown
// and bandwidth, and a GPU's transfers, are part of every point.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

#include "balance/gemm_unit.hpp"
#include "balance/spmv_unit.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/resident.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/tile.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::balance {
namespace {

index_t round_up(index_t a, index_t m) {
  return m <= 1 ? a : (a + m - 1) / m * m;
}

// Device bytes of a 2-D tile of `rows` × `cols` doubles staged for a launch with partition `p`
// (as hit::launch lays it out: rows `row_alignment()` bytes apart, padded to whole blocks when the
// partition asks).
std::uint64_t staged_bytes(index_t rows, index_t cols, const Partition& p) {
  constexpr auto element = static_cast<index_t>(sizeof(double));
  if (p.pad_to_blocks() && p.rank() == 2) {
    rows = round_up(rows, p.block_extent(0));
    cols = round_up(cols, p.block_extent(1));
  }
  const auto align = static_cast<index_t>(p.row_alignment());
  if (align > element && align % element == 0) cols = round_up(cols, align / element);
  return static_cast<std::uint64_t>(std::max<index_t>(rows, 1) * std::max<index_t>(cols, 1) *
                                    element);
}

Shape rect(index_t r0, index_t r1, index_t c0, index_t c1) {
  return Shape{Sig(r0, r1), Sig(c0, c1)};
}

// A tile of the shape, or Error(out_of_memory) naming the kernel and d when the host cannot hold
// it.
Tile<double> host_tile(const Shape& shape, std::string_view kernel, std::int64_t d) {
  try {
    return Tile<double>(shape);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::out_of_memory) throw;
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{} kernel at d = {} units: the host cannot hold a {} tile: {}", kernel,
                            d, shape.str(), e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{} kernel at d = {} units: the host cannot hold a {} tile", kernel, d,
                            shape.str()));
  }
}

void fill(Tile<double>& t, int salt) {
  const Shape& s = t.shape();
  for (index_t i = s[0].begin(); i < s[0].end(); ++i) {
    for (index_t j = s[1].begin(); j < s[1].end(); ++j) {
      t(i, j) = 1.0 / static_cast<double>(1 + (i * 31 + j + salt) % 89);
    }
  }
}

// The partition of `domain` for this rank's device; checks the spec early, on every rank alike.
Partition make_partition(Environment& /*env*/, const std::string& spec, const Shape& domain,
                         const AccessPattern& access) {
  return hit::partition(spec, domain, {.access = access});
}

// ---- gemm --------------------------------------------------------------------------------------

using detail::gemm_geometry;
using detail::GemmGeometry;

struct GemmLaunchState {
  Environment* env = nullptr;
  int b = 0;
  std::string spec;
  Kernel<View<const double>, View<const double>, View<double>> kernel = gemm_accumulate<double>();
  // The main rectangle (A: rows·b × b, B: b × cols·b, C: rows·b × cols·b) and the partial row.
  Tile<double> a, bm, c, a_extra, b_extra, c_extra;
  // With resident_c, C stays on the device between runs, as an application's result does.
  bool resident_c = false;
  Resident<double> c_on_device;
  std::optional<Partition> main, extra;

  void release() {
    a = bm = c = a_extra = b_extra = c_extra = Tile<double>();
    c_on_device = Resident<double>();
    main.reset();
    extra.reset();
  }
};

// ---- stencils (jacobi) -------------------------------------------------------------------------

struct StencilLaunchState {
  explicit StencilLaunchState(StencilKernel k) : kernel(std::move(k)) {}
  Environment* env = nullptr;
  index_t columns = 0;
  std::string spec;
  StencilKernel kernel;
  Tile<double> in, out;  // in: [0:d+2][0:N+2] (the rows and their halo), out: [1:d+1][1:N+1]
  // With `resident`, both stay on the device between runs, as hit-jacobi keeps its grid.
  bool resident = false;
  Resident<double> in_on_device, out_on_device;
  std::optional<Partition> part;

  void release() {
    in_on_device = out_on_device = Resident<double>();
    in = out = Tile<double>();
    part.reset();
  }
};

// ---- spmv --------------------------------------------------------------------------------------

// The matrix and the vectors stay on the device (hit::Resident), as hit-cg keeps them: the first
// run (the warm-up) stages them, the timed runs only compute.
struct SpmvLaunchState {
  Environment* env = nullptr;
  std::string spec;
  index_t rows = 0;
  Resident<index_t> row_ptr;
  Resident<local_index_t> cols;
  Resident<double> values, x, y;
  std::optional<Partition> part;

  void release() {
    row_ptr = Resident<index_t>();
    cols = Resident<local_index_t>();
    values = x = y = Resident<double>();
    part.reset();
    rows = 0;
  }
};

// The element extents of one gemm benchmark at d units: the main update C(rows × cols) +=
// A(rows × b) · B(b × cols), and an optional extra row of blocks C(b × extra) (0: none).
struct GemmExtents {
  index_t rows = 0;
  index_t cols = 0;
  index_t extra = 0;
};

// A gemm_accumulate launch kernel whose d units have the extents `extents(d)`; with `resident_c`,
// C is a hit::Resident (staged by the first run only).
BenchmarkKernel gemm_kernel_with(Environment& env, int block, std::string partition,
                                 std::string name, std::function<double(std::int64_t)> flops,
                                 std::function<GemmExtents(std::int64_t)> extents,
                                 bool resident_c = false) {
  PhysicalTopology::of(env);  // collective at its first use: before ranks diverge
  auto s = std::make_shared<GemmLaunchState>();
  s->env = &env;
  s->resident_c = resident_c;
  s->b = block;
  s->spec = std::move(partition);
  const index_t b = block;
  make_partition(env, s->spec, rect(0, b, 0, b), s->kernel.access());

  BenchmarkKernel k;
  k.name = std::move(name);
  k.complexity = std::move(flops);
  k.setup = [s, extents, name = k.name](std::int64_t d) {
    s->release();
    const index_t bs = s->b;
    const GemmExtents e = extents(d);
    s->a = host_tile(rect(0, e.rows, 0, bs), name, d);
    s->bm = host_tile(rect(0, bs, 0, e.cols), name, d);
    s->c = host_tile(rect(0, e.rows, 0, e.cols), name, d);
    fill(s->a, 1);
    fill(s->bm, 2);
    s->main = make_partition(*s->env, s->spec, s->c.shape(), s->kernel.access());
    if (s->resident_c) s->c_on_device = Resident<double>(s->c, *s->env);
    if (e.extra > 0) {
      s->a_extra = host_tile(rect(0, bs, 0, bs), name, d);
      s->b_extra = host_tile(rect(0, bs, 0, e.extra), name, d);
      s->c_extra = host_tile(rect(0, bs, 0, e.extra), name, d);
      fill(s->a_extra, 3);
      fill(s->b_extra, 4);
      s->extra = make_partition(*s->env, s->spec, s->c_extra.shape(), s->kernel.access());
    }
  };
  k.timed_run = [s] {
    double t = s->resident_c ? hit::launch(s->kernel, *s->main, hit::in(s->a), hit::in(s->bm),
                                           hit::inout(s->c_on_device))
                                   .seconds
                             : hit::launch(s->kernel, *s->main, hit::in(s->a), hit::in(s->bm),
                                           hit::inout(s->c))
                                   .seconds;
    if (s->extra) {
      t += hit::launch(s->kernel, *s->extra, hit::in(s->a_extra), hit::in(s->b_extra),
                       hit::inout(s->c_extra))
               .seconds;
    }
    return t;
  };
  k.teardown = [s] { s->release(); };
  k.device_bytes = [s, extents](std::int64_t d) -> std::uint64_t {
    if (d <= 0) return 0;
    // The main launch holds the most; launches free their memory before the next one.
    const index_t bs = s->b;
    const GemmExtents e = extents(d);
    const Partition p =
        make_partition(*s->env, s->spec, rect(0, e.rows, 0, e.cols), s->kernel.access());
    if (p.out_of_core()) return 0;  // staged chunk by chunk: no size limit from memory
    return staged_bytes(e.rows, bs, p) + staged_bytes(bs, e.cols, p) +
           staged_bytes(e.rows, e.cols, p);
  };
  return k;
}

}  // namespace

BenchmarkKernel gemm_launch_kernel(Environment& env, int block, std::string partition) {
  detail::check_gemm_block(block);
  const index_t b = block;
  return gemm_kernel_with(
      env, block, std::move(partition), detail::gemm_name(block),
      [block](std::int64_t d) { return detail::gemm_flops(block, d); },
      [b](std::int64_t d) {
        const GemmGeometry g = gemm_geometry(d);
        return GemmExtents{g.rows * b, g.cols * b, g.remainder * b};
      });
}

BenchmarkKernel gemm_panel_launch_kernel(Environment& env, int block, std::int64_t rows,
                                         std::int64_t unit_columns, std::string partition) {
  detail::check_gemm_block(block);
  const auto in_range = [](std::int64_t x) { return x >= 1 && x <= (std::int64_t{1} << 24); };
  if (!in_range(rows) || !in_range(unit_columns)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("gemm panel kernel: {} rows, {} columns per unit (allowed 1 to 2^24)",
                            rows, unit_columns));
  }
  const index_t b = block;
  return gemm_kernel_with(
      env, block, std::move(partition),
      fmt::format("gemm-panel(b={},rows={},unit={})", block, rows, unit_columns),
      [b, rows, unit_columns](std::int64_t d) {
        return 2.0 * static_cast<double>(rows) * static_cast<double>(b) *
               static_cast<double>(unit_columns) * static_cast<double>(d);
      },
      [rows, unit_columns](std::int64_t d) {
        return GemmExtents{rows, d * unit_columns, 0};
      },
      true);
}

BenchmarkKernel stencil_launch_kernel(Environment& env, StencilKernel kernel,
                                      StencilBenchmark options) {
  const std::int64_t columns = options.columns;
  if (columns < 1 || columns > (std::int64_t{1} << 24)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} kernel: {} columns (allowed 1 to 2^24)", options.name, columns));
  }
  if (!(options.flops_per_cell > 0) || !std::isfinite(options.flops_per_cell)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} kernel: {} flops per cell (must be positive)", options.name,
                            options.flops_per_cell));
  }
  PhysicalTopology::of(env);  // collective at its first use: before ranks diverge
  auto s = std::make_shared<StencilLaunchState>(std::move(kernel));
  s->env = &env;
  s->columns = columns;
  s->spec = std::move(options.partition);
  s->resident = options.resident;
  make_partition(env, s->spec, rect(1, 2, 1, columns + 1), s->kernel.access());

  BenchmarkKernel k;
  k.name = options.name.empty() ? fmt::format("{}(N={}{})", s->kernel.name(), columns,
                                              options.resident ? ",resident" : "")
                                : options.name;
  k.complexity = [columns, flops = options.flops_per_cell](std::int64_t d) {
    return flops * static_cast<double>(d) * static_cast<double>(columns);
  };
  k.setup = [s, name = k.name](std::int64_t d) {
    s->release();
    const index_t n = s->columns;
    if (static_cast<double>(d + 2) * static_cast<double>(n + 2) > 1e12) {
      throw Error(ErrorKind::out_of_memory,
                  fmt::format("{} kernel: d = {} rows of {} columns is too large", name, d, n));
    }
    s->in = host_tile(rect(0, d + 2, 0, n + 2), name, d);
    s->out = host_tile(rect(1, d + 1, 1, n + 1), name, d);
    fill(s->in, 5);
    s->part = make_partition(*s->env, s->spec, s->out.shape(), s->kernel.access());
    if (s->resident) {
      s->in_on_device = Resident<double>(s->in, *s->env);
      s->out_on_device = Resident<double>(s->out, *s->env);
    }
  };
  k.timed_run = [s] {
    if (s->resident) {
      return hit::launch(s->kernel, *s->part, hit::in(s->in_on_device),
                         hit::inout(s->out_on_device))
          .seconds;
    }
    return hit::launch(s->kernel, *s->part, hit::in(s->in), hit::out(s->out)).seconds;
  };
  k.teardown = [s] { s->release(); };
  k.device_bytes = [s](std::int64_t d) -> std::uint64_t {
    if (d <= 0) return 0;
    const index_t n = s->columns;
    const Partition p =
        make_partition(*s->env, s->spec, rect(1, d + 1, 1, n + 1), s->kernel.access());
    if (p.out_of_core()) return 0;
    return staged_bytes(d + 2, n + 2, p) + staged_bytes(d, n, p);
  };
  return k;
}

BenchmarkKernel jacobi_launch_kernel(Environment& env, std::int64_t columns, std::string partition,
                                     bool resident) {
  return stencil_launch_kernel(
      env, jacobi5<double>(),
      {.name = fmt::format("jacobi5(N={}{})", columns, resident ? ",resident" : ""),
       .columns = columns,
       .flops_per_cell = 4,
       .partition = std::move(partition),
       .resident = resident});
}

BenchmarkKernel spmv_launch_kernel(Environment& env, std::string partition) {
  PhysicalTopology::of(env);  // collective at its first use: before ranks diverge
  auto s = std::make_shared<SpmvLaunchState>();
  s->env = &env;
  s->spec = std::move(partition);
  make_partition(env, s->spec, Shape{Sig(0, 1)}, {});

  BenchmarkKernel k;
  k.name = fmt::format("spmv(poisson3d,plane={}x{})", detail::spmv_plane, detail::spmv_plane);
  k.complexity = [](std::int64_t d) { return detail::spmv_flops(d); };
  k.setup = [s, name = k.name](std::int64_t d) {
    s->release();
    if (d > detail::spmv_max_rows) {
      throw Error(ErrorKind::out_of_memory,
                  fmt::format("{} kernel: d = {} rows is too large (at most {})", name, d,
                              detail::spmv_max_rows));
    }
    const index_t vertices = d + detail::spmv_plane * detail::spmv_plane;
    detail::SpmvRows a;
    Tile<double> x;
    Tile<double> y;
    try {
      a = detail::spmv_rows(d);
      x = Tile<double>(Shape{Sig(0, vertices)});
      y = Tile<double>(Shape{Sig(0, d)});
    } catch (const std::bad_alloc&) {
      throw Error(
          ErrorKind::out_of_memory,
          fmt::format("{} kernel at d = {} rows: the host cannot hold the matrix", name, d));
    }
    for (index_t i = 0; i < vertices; ++i) x(i) = 1.0 / static_cast<double>(1 + i % 89);
    for (index_t i = 0; i < d; ++i) y(i) = 0.0;
    Environment& e = *s->env;
    s->rows = d;
    s->row_ptr = Resident<index_t>(std::move(a.row_ptr), e);
    s->cols = Resident<local_index_t>(std::move(a.cols), e);
    s->values = Resident<double>(std::move(a.values), e);
    s->x = Resident<double>(std::move(x), e);
    s->y = Resident<double>(std::move(y), e);
    s->part = make_partition(e, s->spec, Shape{Sig(0, d)}, {});
  };
  k.timed_run = [s] {
    return hit::spmv(*s->part, s->row_ptr, s->cols, s->values, s->x, s->y, 0, s->rows).seconds;
  };
  k.teardown = [s] { s->release(); };
  k.device_bytes = [s](std::int64_t d) -> std::uint64_t {
    if (d <= 0) return 0;
    const Partition p = make_partition(*s->env, s->spec, Shape{Sig(0, d)}, {});
    if (p.out_of_core()) return 0;
    const auto nnz = static_cast<index_t>(detail::spmv_nonzeros(d));
    const index_t vertices = d + detail::spmv_plane * detail::spmv_plane;
    // 1-D arrays: no row padding on any device.
    const auto bytes = [](index_t n, std::size_t element) {
      return static_cast<std::uint64_t>(n) * element;
    };
    return bytes(d + 1, sizeof(index_t)) + bytes(nnz, sizeof(local_index_t)) +
           bytes(nnz, sizeof(double)) + bytes(vertices, sizeof(double)) + bytes(d, sizeof(double));
  };
  return k;
}

}  // namespace hit::balance
