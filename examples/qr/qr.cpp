// Tile QR with hitmap++: the tiles and their owners come from the layout, the tile kernels run as
// tasks of the task runtime on the process that holds the tiles they write, and with --rhs the
// least-squares solution follows from the same factorisation.
#include "qr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "../common/host_share_tuner.hpp"
#include "hit/hit.hpp"
#include "qr_check.hpp"
#include "task_qr.hpp"

namespace hit::qr {
namespace {

// The generated input: entries in [-1, 1) from (seed, global index); random, so of full rank.
template <class T>
T generated(std::uint64_t seed, index_t i, index_t j) {
  return static_cast<T>(
      app::hashed_value(seed, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j)));
}

// What hit-qr refuses before it lays anything out, the same on every process.
void check_options(Environment& env, const Options& o) {
  if (o.rows() < o.n) {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            fmt::format("hit-qr needs at least as many rows as columns (m >= n): "
                                        "--m {} < --n {}; factorise the transpose instead",
                                        o.rows(), o.n));
  }
  if (!o.run.partition_given.empty() && o.run.partition_given != "single") {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            "hit-qr runs each tile kernel as one LAPACK call on its tiles: "
                            "--partition must be single, got '" +
                                o.run.partition_given + "'");
  }
  const bool cuda = device(env).kind() == DeviceKind::cuda;
  if (allreduce(cuda ? 1 : 0, ReduceOp::max) != 0) {
    throw Error::everywhere(ErrorKind::device,
                            "hit-qr has no CUDA tile kernels yet: run it on cpu or emu devices");
  }
}

// The tiles of a layout of contiguous blocks only (a cyclic layout's strided blocks are not
// tiles); the output names writable. The same on every rank.
void check_layout_and_outputs(Environment& env, const Options& o, const Layout& lay) {
  app::require_contiguous_blocks(lay, "hit-qr");
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.r_out.empty()) check_output_array(o.r_out, "R (--r-out)");
    if (!o.q_out.empty()) check_output_array(o.q_out, "Q (--q-out)");
    if (!o.x_out.empty()) check_output_array(o.x_out, "x (--x-out)");
    if (!o.run.svg.empty()) check_output_path(o.run.svg, "the timeline (--svg)");
  });
}

// A tile per block of this process.
template <class T>
std::vector<Tile<T>> local_blocks(const Layout& lay) {
  std::vector<Tile<T>> tiles;
  for (const Shape& b : lay.local().blocks) tiles.emplace_back(b);
  return tiles;
}

template <class T>
void load_input(Environment& env, const Options& o, const Shape& whole,
                std::vector<Tile<T>>& blocks) {
  if (!o.a_file.empty()) {
    hit::read(o.a_file, whole, blocks, env.comm());
    // LAPACK's Householder reflections carry a NaN silently into R and Q.
    check_finite(o.a_file, whole, blocks, env.comm(), "A (--a)");
    return;
  }
  for (Tile<T>& t : blocks) {
    t.for_each([&](const Index& i, T& v) { v = generated<T>(o.run.seed, i[0], i[1]); });
  }
}

// b, read whole by every process, as the tiles of b's column this process holds (per tile row;
// null where another holds it).
template <class T>
std::vector<Tile<T>> load_rhs(Environment& env, const Options& o, const QrTiling& tiling,
                              const std::vector<int>& b_owner) {
  const Shape whole = Shape::extents({o.rows()});
  Tile<T> b(whole);
  hit::read(o.rhs_file, whole, b, env.comm());
  check_finite(o.rhs_file, whole, b, env.comm(), "b (--rhs)");
  std::vector<Tile<T>> tiles(static_cast<std::size_t>(tiling.rows()));
  for (int i = 0; i < tiling.rows(); ++i) {
    if (b_owner[static_cast<std::size_t>(i)] != env.rank()) continue;
    const Sig rows = tiling.row_range(i);
    Tile<T>& t = tiles[static_cast<std::size_t>(i)];
    t = Tile<T>(Shape{rows, Sig(o.n, o.n + 1)});
    for (index_t r = rows.begin(); r < rows.end(); ++r) t(r, o.n) = b(r);
  }
  return tiles;
}

// n·ε·‖A‖_F: a diagonal element of R no larger makes A rank-deficient for the solve.
template <class T>
T rank_tolerance(const Options& o, const std::vector<Tile<T>>& blocks) {
  double squares = 0;
  for (const Tile<T>& t : blocks) {
    t.for_each([&](const Index&, const T& v) { squares += double(v) * double(v); });
  }
  const double norm = std::sqrt(allreduce(squares, ReduceOp::sum));
  return static_cast<T>(static_cast<double>(o.n) * std::numeric_limits<T>::epsilon() * norm);
}

// R: the upper triangle of the first n rows of the factorised blocks, zeros below it.
template <class T>
std::vector<Tile<T>> r_parts(const std::vector<Tile<T>>& blocks, index_t n) {
  std::vector<Tile<T>> parts;
  for (const Tile<T>& b : blocks) {
    const Shape top = b.shape().intersect(Shape::extents({n, n}));
    if (top.empty()) continue;
    Tile<T> r(top);
    r.for_each([&](const Index& i, T& v) { v = i[1] >= i[0] ? b(i[0], i[1]) : T(0); });
    parts.push_back(std::move(r));
  }
  return parts;
}

// x: the first n rows of b's tiles after the solve, as 1-D parts.
template <class T>
std::vector<Tile<T>> x_parts(const std::vector<Tile<T>>& rhs, index_t n) {
  std::vector<Tile<T>> parts;
  for (const Tile<T>& t : rhs) {
    if (t.is_null() || t.shape()[0].begin() >= n) continue;
    const Sig rows(t.shape()[0].begin(), std::min(t.shape()[0].end(), n));
    Tile<T> x(Shape{rows});
    for (index_t r = rows.begin(); r < rows.end(); ++r) x(r) = t(r, n);
    parts.push_back(std::move(x));
  }
  return parts;
}

// A factorisation of --tune's small problem on a layout of it, with what it needs alive.
template <class T>
struct TuneTrial {
  Layout lay;
  QrTiling tiling;
  std::vector<Tile<T>> blocks;
  std::vector<Tile<T>> input;
  TaskQr<T> tasks;
  TuneTrial(Environment& env, const Options& o, const Layout& l)
      : lay(l),
        tiling(lay),
        blocks(local_blocks<T>(lay)),
        input(local_blocks<T>(lay)),
        tasks(tiling, blocks, nullptr, T(0), device(env), lay, env) {
    load_input(env, o, lay.shape(), input);
  }
  // One factorisation: this process's workers' seconds of tile kernels over its workers.
  double run() {
    for (std::size_t b = 0; b < blocks.size(); ++b) blocks[b].copy_from(input[b]);
    tasks.run();
    return tasks.runner().busy_s() / tasks.runner().workers();
  }
};

// --tune: B_h of heteroBlockCyclic, as Song et al. tune it; `lay` becomes the tuned layout.
template <class T>
std::vector<app::TuneStep> tune(Environment& env, const Options& o, Layout& lay) {
  const std::vector<app::TuneStep> steps =
      app::tune_host_share(env, lay, o.tune_n, [&](const Layout& l) -> app::TuneRun {
        Options small = o;
        small.m = small.n = l.shape().extent(0);
        small.a_file.clear();
        auto trial = std::make_shared<TuneTrial<T>>(env, small, l);
        return [trial] { return trial->run(); };
      });
  lay =
      layout(lay.spec_value().with("bh", app::best_host_share(steps)), lay.topology(), lay.shape());
  return steps;
}

template <class T>
int factorise(Environment& env, const Options& o) {
  check_options(env, o);
  app::Harness harness(env, o.run);
  const index_t m = o.rows();
  const Topology topo = topology(o.topology);
  Layout lay = layout(o.layout, topo, Shape::extents({m, o.n}));
  const std::vector<app::TuneStep> tuning =
      o.tune ? tune<T>(env, o, lay) : std::vector<app::TuneStep>{};
  check_layout_and_outputs(env, o, lay);
  const QrTiling tiling(lay);
  std::vector<Tile<T>> blocks = local_blocks<T>(lay);
  std::vector<Tile<T>> input = local_blocks<T>(lay);
  load_input(env, o, lay.shape(), input);
  const bool solve = !o.rhs_file.empty();
  std::vector<Tile<T>> rhs_input;
  if (solve) rhs_input = load_rhs<T>(env, o, tiling, rhs_owners(tiling, lay));
  std::vector<Tile<T>> rhs = rhs_input;
  for (Tile<T>& t : rhs) {
    if (!t.is_null()) t = Tile<T>(t.shape());
  }
  TaskQr<T> tasks(tiling, blocks, solve ? &rhs : nullptr, rank_tolerance(o, input), device(env),
                  lay, env);
  runtime::ExecutionReport last;  // of the last repetition: the timeline
  harness.repeat(
      [&](int) {
        for (std::size_t b = 0; b < blocks.size(); ++b) blocks[b].copy_from(input[b]);
        for (std::size_t i = 0; i < rhs.size(); ++i) {
          if (!rhs[i].is_null()) rhs[i].copy_from(rhs_input[i]);
        }
      },
      [&](app::Clock& clock) {
        last = tasks.run();
        app::trace_tasks(env, tasks, last);
        clock.compute_seconds_add(tasks.runner().busy_s() / tasks.runner().workers());
      });
  if (!o.run.svg.empty()) {
    app::write_timeline(
        env, o.run.svg,
        fmt::format("hit-qr, {} x {}, {} processes: tasks per worker", m, o.n, env.size()), tasks,
        last);
  }
  harness.set_work(tasks.flops());
  std::vector<Tile<T>> q;
  if (o.run.check || !o.q_out.empty()) {
    q = local_blocks<T>(lay);
    tasks.form_q(q);
  }
  const std::vector<Tile<T>> r = r_parts(blocks, o.n);
  const std::vector<Tile<T>> x = solve ? x_parts(rhs, o.n) : std::vector<Tile<T>>{};
  app::CheckResult check;
  if (o.run.check) check = verify(env, o, lay, input, r, q, rhs_input, x);
  if (!o.r_out.empty()) hit::write(o.r_out, Shape::extents({o.n, o.n}), r, env.comm());
  if (!o.q_out.empty()) hit::write(o.q_out, lay.shape(), q, env.comm());
  if (!o.x_out.empty()) hit::write(o.x_out, Shape::extents({o.n}), x, env.comm());

  const double time = harness.median_time();
  const double mm = static_cast<double>(m), n = static_cast<double>(o.n);
  nlohmann::json fields = {{"app", "qr"},
                           {"m", m},
                           {"n", o.n},
                           {"tile_rows", tiling.rows()},
                           {"tile_columns", tiling.columns()},
                           {"tile_max", tiling.max_width()},
                           {"solve", solve},
                           {"topology", {{"name", topo.name()}, {"dims", topo.dims()}}},
                           {"layout", lay.spec()},
                           {"partition", "single"}};
  fields["runtime"] = app::runtime_json(tasks.tasks(), tasks.messages(), tasks.runner());
  std::vector<std::string> lines;
  app::describe_host_share(tuning, fields, lines);  // an empty `tuning` without --tune
  // LAPACK's count for dgeqrf: 2mn² − 2n³/3.
  const double work = 2 * mm * n * n - 2 * n * n * n / 3;
  return harness.report(
      {.fields = fields,
       .headline = fmt::format("hit-qr: {}x{}, {}, {} ranks, {}x{} tiles (widest {}), {}{}", m, o.n,
                               o.run.type, env.size(), tiling.rows(), tiling.columns(),
                               tiling.max_width(), lay.spec(), solve ? ", least squares" : ""),
       .throughput = {"gflops", time > 0 ? work / time * 1e-9 : 0.0},
       .work_unit = "flops",
       .lines = lines,
       .check = check});
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return factorise<T>(env, o); });
}

}  // namespace hit::qr
