#pragma once
// What the matrix-product examples (hit-cannon, hit-summa) share around their algorithms: their
// options and command line, the input matrices (generated from a seed and the global index, or
// read from raw files), the serial reference of --check, and the result file and report.
// Header-only: examples/common is not a program.

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "../../tools/common/cli.hpp"
#include "app.hpp"
#include "harness.hpp"
#include "hit/hit.hpp"

namespace hit::app {

// What every matrix-product example takes: C = A·B with A n×m and B m×k, a layout for each
// matrix, input files (empty: generated) and an output file, and the shared run flags.
struct ProductOptions {
  long n = 1024;
  long m = -1;                  // defaults to n
  long k = -1;                  // defaults to n
  Setting layout_a = "blocks";  // resolved at the start (ProductFlags::apply)
  Setting layout_b = "blocks";
  Setting layout_c = "blocks";
  std::string a_file;
  std::string b_file;
  std::string c_out;
  RunOptions run;
};

// The command line of a matrix-product example. The layouts given on it win over
// HIT_LAYOUT_A/B/C, which win over the defaults written in the program (ProductOptions).
class ProductFlags {
 public:
  void add_to(CLI::App& cli, ProductOptions& o) {
    cli.add_option("--n", o.n, "rows of A and C")->check(hit::cli::count(1));
    cli.add_option("--m", o.m, "columns of A, rows of B (default n)")->check(hit::cli::count(1));
    cli.add_option("--k", o.k, "columns of B and C (default n)")->check(hit::cli::count(1));
    cli.add_option("--layout", layout_, "layout spec for all three matrices");
    cli.add_option("--layout-a", layouts_[0], "layout spec of A (else HIT_LAYOUT_A, else blocks)");
    cli.add_option("--layout-b", layouts_[1], "layout spec of B (else HIT_LAYOUT_B, else blocks)");
    cli.add_option("--layout-c", layouts_[2], "layout spec of C (else HIT_LAYOUT_C, else blocks)");
    o.run.add_to(cli, "verify against a serial product",
                 "draw the layouts of A, B and C to this SVG file", "C");
    cli.add_option("--a", o.a_file,
                   "read A from this raw file or FILE.h5:/dataset (row-major, no header)")
        ->check(hit::cli::file_name());
    cli.add_option("--b", o.b_file, "read B from this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name());
    cli.add_option("--c-out", o.c_out, "write C to this raw file or FILE.h5:/dataset")
        ->check(hit::cli::file_name());
  }
  // After parsing: each layout resolved (--layout-<x>, else --layout, else HIT_LAYOUT_<X>, else
  // the program's), m and k defaulting to n, the run flags applied, and the output file checked
  // before any computation. Collective.
  void apply(Environment& env, ProductOptions& o) const {
    const char* labels[3] = {"a", "b", "c"};
    Setting* specs[3] = {&o.layout_a, &o.layout_b, &o.layout_c};
    for (int i = 0; i < 3; ++i) {
      const bool own = !layouts_[i].empty();
      *specs[i] =
          given_or(layout_setting(env, labels[i], specs[i]->code), own ? layouts_[i] : layout_,
                   own ? std::string("--layout-") + labels[i] : std::string("--layout"));
    }
    if (o.m < 0) o.m = o.n;
    if (o.k < 0) o.k = o.n;
    o.run.apply(env, "c");
    collectively(env.comm(), [&] {
      if (env.rank() == 0 && !o.c_out.empty()) check_output_array(o.c_out, "C (--c-out)");
    });
  }

 private:
  std::string layout_;
  std::string layouts_[3];
};

// C = A·B with A n×m and B m×k; the files (empty: generated from `seed`, `seed + 1`).
struct ProductInputs {
  long n = 0;
  long m = 0;
  long k = 0;
  std::string a_file;
  std::string b_file;
  std::uint64_t seed = 1;
};

template <class T>
void fill_generated(Tile<T>& tile, std::uint64_t seed) {
  tile.for_each([&](const Index& i, T& v) {
    v = static_cast<T>(app::hashed_value(seed, static_cast<std::uint64_t>(i[0]),
                                         static_cast<std::uint64_t>(i[1])));
  });
}

// `what` names the matrix in messages ("A (--a)"). A file with a NaN or an infinity is an error on
// every rank naming the first one: the BLAS would carry it silently into C.
template <class T>
void load_matrix(Environment& env, const std::string& file, const Shape& whole, Tile<T>& tile,
                 std::uint64_t seed, std::string_view what) {
  if (!file.empty()) {
    hit::read(file, whole, tile, env.comm());
    check_finite(file, whole, tile, env.comm(), what);
  } else {
    fill_generated(tile, seed);
  }
}

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

// C gathered on rank 0 against the serial product of the same inputs (the generated ones, or
// the files).
template <class T>
CheckResult verify_product(Environment& env, const ProductInputs& o, const Layout& lc, Tile<T>& c) {
  CheckResult check;
  check.ran = true;
  const bool root = env.rank() == 0;
  const Shape sa = Shape::extents({o.n, o.m});
  const Shape sb = Shape::extents({o.m, o.k});
  Tile<T> whole_a = root ? Tile<T>(sa) : Tile<T>();
  Tile<T> whole_b = root ? Tile<T>(sb) : Tile<T>();
  Tile<T> whole_c = root ? Tile<T>(lc.shape()) : Tile<T>();
  load_matrix(env, o.a_file, sa, whole_a, o.seed, "A (--a)");
  load_matrix(env, o.b_file, sb, whole_b, o.seed + 1, "B (--b)");
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
  broadcast(err, 0, env.comm());
  const double tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-4;
  check.max_rel_error = err;
  check.passed = err <= tolerance;
  char line[128];
  std::snprintf(line, sizeof line, "%s (max relative error %.3g)",
                check.passed ? "passed" : "FAILED", err);
  check.summary = line;
  return check;
}

// The layouts of A, B and C side by side in one SVG file (--svg; nothing when `svg` is empty).
// Only rank 0 writes; a failure there is agreed, so no rank waits in a collective. Collective.
inline void draw_product_layouts(Environment& env, const std::string& svg, const Layout& a,
                                 const Layout& b, const Layout& c) {
  collectively(env.comm(), [&] {
    if (svg.empty() || env.rank() != 0) return;
    write_file_atomically(svg, side_by_side_svg({layout_svg(a, "A (" + a.spec() + ")"),
                                                 layout_svg(b, "B (" + b.spec() + ")"),
                                                 layout_svg(c, "C (" + c.spec() + ")")}));
  });
}

// The end of a matrix-product example: C written (--c-out), checked (--check), and the report
// with the app's own `fields` (app, grid, ...) joined by the sizes, layouts and partition, and
// GFLOP/s = 2·n·m·k / time. Collective; returns the exit status.
template <class T>
int finish_product(Environment& env, const ProductOptions& o, Harness& harness, const Layout& la,
                   const Layout& lb, const Layout& lc, const Partition& part, Tile<T>& c,
                   nlohmann::json fields, const std::string& headline) {
  if (!o.c_out.empty()) hit::write(o.c_out, lc.shape(), c, env.comm());
  const CheckResult check =
      o.run.check ? verify_product(env, {o.n, o.m, o.k, o.a_file, o.b_file, o.run.seed}, lc, c)
                  : CheckResult{};
  harness.set_work(c.is_null() ? 0.0
                               : 2.0 * static_cast<double>(c.size()) * static_cast<double>(o.m));
  const double t = harness.median_time();
  const double flops =
      2.0 * static_cast<double>(o.n) * static_cast<double>(o.m) * static_cast<double>(o.k);
  fields["n"] = o.n;
  fields["m"] = o.m;
  fields["k"] = o.k;
  fields["layouts"] = {{"a", la.spec()}, {"b", lb.spec()}, {"c", lc.spec()}};
  fields["partition"] = part.spec().empty() ? o.run.partition.value : part.spec();
  return harness.report(
      {.fields = fields,
       .headline = headline,
       .throughput = {"gflops", t > 0 ? flops / t * 1e-9 : 0.0},
       .work_unit = "flops",
       .lines = {"layouts: A " + la.spec() + ", B " + lb.spec() + ", C " + lc.spec()},
       .check = check});
}

}  // namespace hit::app
