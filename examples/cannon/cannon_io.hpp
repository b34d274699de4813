#pragma once
// Everything of hit-cannon around the algorithm (cannon.cpp): which layout combinations Cannon
// can use, the input matrices (generated or read), the --check against a serial product, the
// result file and the report.

#include <cblas.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/harness.hpp"
#include "cannon.hpp"
#include "hit/hit.hpp"

namespace hit::cannon {

// Cannon is correct only when the blocks line up: A's row blocks are C's, B's column blocks are
// C's, A's column blocks are B's row blocks, and every process of the active grid holds all
// three. Also draws the layouts (--svg). Errors are the same on every rank (layouts are).
inline void check_and_draw(Environment& env, const Options& o, const Layout& a, const Layout& b,
                           const Layout& c) {
  const Topology& topo = c.topology();
  const int side = topo.dims()[0];
  const int ext[6] = {a.active_extent(0), a.active_extent(1), b.active_extent(0),
                      b.active_extent(1), c.active_extent(0), c.active_extent(1)};
  for (int e : ext) {
    if (e != ext[0]) {
      throw Error(ErrorKind::shape,
                  "Cannon needs every process of the active grid to hold a block of A, B and C; "
                  "with n=" +
                      std::to_string(o.n) + " m=" + std::to_string(o.m) +
                      " k=" + std::to_string(o.k) + " on a " + std::to_string(side) + "x" +
                      std::to_string(side) +
                      " grid the layouts leave some without (use fewer processes or larger sizes)");
    }
  }
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
  const auto mismatch = [](const std::string& what, const std::string& x, const std::string& y) {
    return Error(ErrorKind::shape, "Cannon needs " + what + ": " + x + " vs " + y);
  };
  for (int p = 0; p < topo.grid_size(); ++p) {
    if (!c.active(p)) continue;
    const Shape bc = c.block(p);
    const Shape ba = a.block(p);
    const Shape bb = b.block(p);
    const std::string r = " (rank " + std::to_string(p) + ")";
    if (!(ba[0] == bc[0])) {
      throw mismatch("A's row blocks to equal C's",
                     "A " + ba.str() + r + ", layout '" + a.spec() + "'",
                     "C " + bc.str() + ", layout '" + c.spec() + "'");
    }
    if (!(bb[1] == bc[1])) {
      throw mismatch("B's column blocks to equal C's",
                     "B " + bb.str() + r + ", layout '" + b.spec() + "'",
                     "C " + bc.str() + ", layout '" + c.spec() + "'");
    }
    // A(i, j) and B(j, i) hold the same slice of the inner dimension.
    const Index coords = topo.coords(p);
    const int q = topo.proc_at(Index{coords[1], coords[0]});
    if (!(ba[1] == b.block(q)[0])) {
      throw mismatch(
          "A's column blocks to equal B's row blocks",
          "A " + ba.str() + r + ", layout '" + a.spec() + "'",
          "B " + b.block(q).str() + " (rank " + std::to_string(q) + "), layout '" + b.spec() + "'");
    }
  }
  // Only rank 0 writes; a failure there is agreed so no rank waits in a collective.
  collectively(env.comm(), [&] {
    if (o.run.svg.empty() || env.rank() != 0) return;
    write_file_atomically(o.run.svg,
                          app::side_by_side_svg({layout_svg(a, "A (" + a.spec() + ")"),
                                                 layout_svg(b, "B (" + b.spec() + ")"),
                                                 layout_svg(c, "C (" + c.spec() + ")")}));
  });
}

template <class T>
void fill_generated(Tile<T>& tile, std::uint64_t seed) {
  tile.for_each([&](const Index& i, T& v) {
    v = static_cast<T>(app::hashed_value(seed, static_cast<std::uint64_t>(i[0]),
                                         static_cast<std::uint64_t>(i[1])));
  });
}

template <class T>
void load(Environment& env, const std::string& file, const Shape& whole, Tile<T>& tile,
          std::uint64_t seed) {
  if (!file.empty()) {
    read_raw(file, whole, tile, env.comm());
  } else {
    fill_generated(tile, seed);
  }
}

// The input blocks of this process, kept to start every repetition from them (the shifts move
// the blocks around).
template <class T>
class Inputs {
 public:
  Inputs(Environment& env, const Options& o, const Layout& la, const Layout& lb, Resident<T>& a,
         Resident<T>& b) {
    load(env, o.a_file, la.shape(), a.host(), o.run.seed);
    load(env, o.b_file, lb.shape(), b.host(), o.run.seed + 1);
    a0_ = a.host().clone();
    b0_ = b.host().clone();
  }
  // Whole padded buffers: after the shifts the padding holds other blocks' wider data.
  void restore(Resident<T>& a, Resident<T>& b) const {
    a.host().padded().copy_from(a0_.padded());
    b.host().padded().copy_from(b0_.padded());
    a.modified_on_host();
    b.modified_on_host();
  }

 private:
  Tile<T> a0_;
  Tile<T> b0_;
};

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

// C gathered on rank 0 against the serial product of the same inputs.
template <class T>
app::CheckResult verify(Environment& env, const Options& o, const Layout& lc, Tile<T>& c) {
  app::CheckResult check;
  check.ran = true;
  const bool root = env.rank() == 0;
  const Shape sa = Shape::extents({o.n, o.m});
  const Shape sb = Shape::extents({o.m, o.k});
  Tile<T> whole_a = root ? Tile<T>(sa) : Tile<T>();
  Tile<T> whole_b = root ? Tile<T>(sb) : Tile<T>();
  Tile<T> whole_c = root ? Tile<T>(lc.shape()) : Tile<T>();
  load(env, o.a_file, sa, whole_a, o.run.seed);
  load(env, o.b_file, sb, whole_b, o.run.seed + 1);
  gather(lc, c, 0, whole_c).run();
  double err = 0;
  if (root) {
    Tile<T> ref(lc.shape());
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
  char line[128];
  std::snprintf(line, sizeof line, "%s (max relative error %.3g)",
                check.passed ? "passed" : "FAILED", err);
  check.summary = line;
  return check;
}

// The result file, the check and the report.
template <class T>
int finish(Environment& env, const Options& o, app::Harness& harness, const Layout& la,
           const Layout& lb, const Layout& lc, const Partition& part, Tile<T>& c) {
  if (!o.c_out.empty()) write_raw(o.c_out, lc.shape(), c, env.comm());
  const app::CheckResult check = o.run.check ? verify(env, o, lc, c) : app::CheckResult{};
  harness.set_work(c.is_null() ? 0.0
                               : 2.0 * static_cast<double>(c.size()) * static_cast<double>(o.m));
  const double t = harness.median_time();
  const double flops =
      2.0 * static_cast<double>(o.n) * static_cast<double>(o.m) * static_cast<double>(o.k);
  const Topology& grid = lc.topology();
  const nlohmann::json fields = {
      {"app", "cannon"},
      {"n", o.n},
      {"m", o.m},
      {"k", o.k},
      {"grid", {grid.dims()[0], grid.dims()[1]}},
      {"layouts", {{"a", la.spec()}, {"b", lb.spec()}, {"c", lc.spec()}}},
      {"partition", part.spec().empty() ? o.run.partition : part.spec()},
  };
  char headline[256];
  std::snprintf(headline, sizeof headline,
                "hit-cannon: C(%ldx%ld) = A(%ldx%ld) * B(%ldx%ld), %s, %d ranks on a %dx%d grid",
                o.n, o.k, o.n, o.m, o.m, o.k, o.run.type.c_str(), env.size(), grid.dims()[0],
                grid.dims()[1]);
  return harness.report(fields, headline, {"gflops", t > 0 ? flops / t * 1e-9 : 0.0}, "flops",
                        {"layouts: A " + la.spec() + ", B " + lb.spec() + ", C " + lc.spec()},
                        check);
}

}  // namespace hit::cannon
