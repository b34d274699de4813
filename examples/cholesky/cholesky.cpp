// Right-looking tiled Cholesky with hitmap++: the tiles and their owners come from the layout,
// each process runs the tile kernels of the tiles it holds on its device, and every panel reaches
// the processes that update with it through fetches built once from the layout.
#include "cholesky.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../common/host_share_tuner.hpp"
#include "cholesky_io.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"
#include "task_cholesky.hpp"
#include "tile_kernels.hpp"

namespace hit::cholesky {
namespace {

// This process's views of the tiles of the lower triangle it holds: per tile column j, the
// diagonal tile (when it is this process's) and the runs below it, the rows under the diagonal
// tile that one block of this process holds in column j. A run spans as many tiles as its block
// is tall (a heteroBlockCyclic block holds several thin tiles of a column), so one BLAS call
// updates all of them. Only this process's blocks are looked at: what it needs from the others,
// it asks for (hit::fetch).
template <class T>
class TileMap {
 public:
  TileMap(const Tiling& tiling, std::vector<Tile<T>>& blocks) : tiling_(tiling) {
    const auto columns = static_cast<std::size_t>(tiling.count());
    below_.assign(columns, false);
    diagonal_.resize(columns);
    runs_.resize(columns);
    for (Tile<T>& b : blocks) {
      const Shape& s = b.shape();
      for_tile_columns(s, [&](int j) {
        const auto u = static_cast<std::size_t>(j);
        const Sig cols = tiling.range(j);
        if (s[0].includes(cols)) diagonal_[u] = b.select(Shape{cols, cols});
        if (s[0].end() > tiling.cut(j + 1)) below_[u] = true;
        if (s[0].end() > tiling.cut(j)) last_column_ = std::max(last_column_, j);
        const Sig rows(std::clamp(tiling.cut(j + 1), s[0].begin(), s[0].end()), s[0].end());
        if (!rows.empty()) runs_[u].push_back(b.select(Shape{rows, cols}));
      });
    }
    for (auto& list : runs_) {
      std::sort(list.begin(), list.end(), [](const Tile<T>& x, const Tile<T>& y) {
        return x.shape()[0].begin() < y.shape()[0].begin();
      });
    }
  }
  // This process's diagonal tile j (the null tile when another process holds it).
  Tile<T>& diagonal(int j) { return diagonal_[static_cast<std::size_t>(j)]; }
  std::vector<Tile<T>>& runs(int j) { return runs_[static_cast<std::size_t>(j)]; }
  // This process needs the diagonal tile k from its owner: it holds a tile below it, and not the
  // diagonal tile itself.
  bool needs_diagonal(int k) const {
    return below_[static_cast<std::size_t>(k)] && diagonal_[static_cast<std::size_t>(k)].is_null();
  }
  // This process holds a tile of the lower triangle in a column after k (and so updates with
  // panel k).
  bool holds_after(int k) const { return last_column_ > k; }

 private:
  // Calls fn(j) for every tile column inside the block's columns (the cuts refine the blocks).
  template <class F>
  void for_tile_columns(const Shape& block, F&& fn) const {
    const auto first =
        std::lower_bound(tiling_.cuts().begin(), tiling_.cuts().end(), block[1].begin());
    for (auto c = first; c + 1 < tiling_.cuts().end() && *c < block[1].end(); ++c) {
      fn(static_cast<int>(c - tiling_.cuts().begin()));
    }
  }

  const Tiling& tiling_;
  std::vector<bool> below_;  // per tile column: this process holds a tile below the diagonal
  int last_column_ = -1;     // the last tile column in which it holds a tile of the triangle
  std::vector<Tile<T>> diagonal_;
  std::vector<std::vector<Tile<T>>> runs_;
};

// One factorisation of the matrix under one layout: this process's blocks and tiles, the
// communication built once from the layout, and the tile kernels. run() factorises from the
// input copy; it can be run again (the timed repetitions, the tuner's trials).
template <class T>
class Factorisation {
 public:
  Factorisation(Environment& env, const Options& o, const Layout& lay)
      : env_(env), o_(o), lay_(lay), tiling_(lay) {
    for (const Shape& b : lay.local().blocks) {
      blocks_.emplace_back(b);
      input_.emplace_back(b);
    }
    load_input(env, o, lay.shape(), input_);
    tiles_.emplace(tiling_, blocks_);
    plan_communication();
  }

  // Back to the input matrix.
  void restore() {
    for (std::size_t b = 0; b < blocks_.size(); ++b) blocks_[b].copy_from(input_[b]);
  }

  // The factorisation, right-looking by tile columns: with look-ahead, column k + 1 of the
  // trailing matrix is updated first, so the next panel is factorised and on its way while the
  // rest of the update runs.
  void run(app::Clock& clock) {
    count_ = flops_ == 0;
    const int t = tiling_.count();
    factor_column(clock, 0);
    for (int k = 0; k + 1 < t; ++k) {
      clock.comm([&] { get_panel_[static_cast<std::size_t>(k)].wait(); });
      if (o_.lookahead) {
        update_column(clock, k, k + 1);
        factor_column(clock, k + 1);
        for (int j = k + 2; j < t; ++j) update_column(clock, k, j);
      } else {
        for (int j = k + 1; j < t; ++j) update_column(clock, k, j);
        factor_column(clock, k + 1);
      }
    }
  }

  const Tiling& tiling() const noexcept { return tiling_; }
  std::vector<Tile<T>>& blocks() noexcept { return blocks_; }
  // The flops of this process's tile kernels in one factorisation.
  double flops() const noexcept { return flops_; }

 private:
  // For every tile column k: the diagonal tile to the processes that hold tiles below it, then
  // the panel below it to every process that holds tiles to its right: each process asks for
  // what it needs. Panels alternate between two buffers (relabelled to each panel's indices), so
  // panel k + 1 can travel while panel k is used. Built in the same order on every process (the
  // builders are collective).
  void plan_communication() {
    const int t = tiling_.count();
    const index_t w = tiling_.max_width();
    diagonal_buffer_ = Tile<T>(Shape::extents({w, w}));
    for (Tile<T>& b : panel_buffers_) b = Tile<T>(Shape::extents({o_.n, w}));
    diagonal_.resize(static_cast<std::size_t>(t));
    panel_.resize(static_cast<std::size_t>(t));
    get_diagonal_.resize(static_cast<std::size_t>(t));
    get_panel_.resize(static_cast<std::size_t>(t));
    for (int k = 0; k < t; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      diagonal_[kk] =
          diagonal_buffer_.select_tile(Shape::extents({tiling_.width(k), tiling_.width(k)}))
              .relabel(tiling_.tile(k, k));
      const Shape diagonal = tiles_->needs_diagonal(k) ? tiling_.tile(k, k) : Shape();
      get_diagonal_[kk] = fetch(lay_, blocks_, diagonal, diagonal_[kk]);
      if (k + 1 == t) break;
      const Shape below = tiling_.panel(k);
      panel_[kk] = panel_buffers_[k % 2]
                       .select_tile(Shape::extents({below.extent(0), below.extent(1)}))
                       .relabel(below);
      get_panel_[kk] = fetch(lay_, blocks_, tiles_->holds_after(k) ? below : Shape(), panel_[kk]);
    }
  }

  void add(double f) {
    if (count_) flops_ += f;
  }
  static Partition whole(const Tile<T>& written) { return partition("single", written.shape()); }

  // The diagonal tile k factorised, sent down its column, the tiles below it solved, and the
  // panel sent on.
  void factor_column(app::Clock& clock, int k) {
    const auto kk = static_cast<std::size_t>(k);
    const double wk = static_cast<double>(tiling_.width(k));
    TileMap<T>& tiles = *tiles_;
    Tile<T>& own = tiles.diagonal(k);
    if (!own.is_null()) {
      clock.compute(launch(potrf_, whole(own), inout(own), static_cast<index_t>(k)));
      add(wk * wk * wk / 3);
    }
    clock.comm([&] { get_diagonal_[kk].run(); });
    Tile<T>& l_kk = own.is_null() ? diagonal_[kk] : own;
    for (Tile<T>& run : tiles.runs(k)) {
      clock.compute(launch(trsm_, whole(run), in(l_kk), inout(run)));
      add(static_cast<double>(run.shape().extent(0)) * wk * wk);
    }
    if (k + 1 < tiling_.count()) clock.comm([&] { get_panel_[kk].start(); });
  }

  // Column j of the trailing matrix updated with panel k: the diagonal tile by syrk, each run
  // below it by one gemm.
  void update_column(app::Clock& clock, int k, int j) {
    const Tile<T>& p = panel_[static_cast<std::size_t>(k)];
    const Sig cols = tiling_.range(k);
    const double wk = static_cast<double>(tiling_.width(k));
    const double wj = static_cast<double>(tiling_.width(j));
    const Tile<T> l_j = p.select(Shape{tiling_.range(j), cols});
    TileMap<T>& tiles = *tiles_;
    Tile<T>& own = tiles.diagonal(j);
    if (!own.is_null()) {
      clock.compute(launch(syrk_, whole(own), in(l_j), inout(own)));
      add(wj * wj * wk);
    }
    for (Tile<T>& run : tiles.runs(j)) {
      const Tile<T> l_run = p.select(Shape{run.shape()[0], cols});
      clock.compute(launch(gemm_, whole(run), in(l_run), in(l_j), inout(run)));
      add(2 * static_cast<double>(run.shape().extent(0)) * wj * wk);
    }
  }

  Environment& env_;
  const Options& o_;
  Layout lay_;
  Tiling tiling_;
  std::vector<Tile<T>> blocks_;
  std::vector<Tile<T>> input_;
  std::optional<TileMap<T>> tiles_;
  Tile<T> diagonal_buffer_;
  Tile<T> panel_buffers_[2];
  std::vector<Tile<T>> diagonal_;
  std::vector<Tile<T>> panel_;
  std::vector<Comm> get_diagonal_;
  std::vector<Comm> get_panel_;
  Kernel<View<T>, index_t> potrf_ = potrf<T>();
  Kernel<View<const T>, View<T>> trsm_ = trsm<T>();
  Kernel<View<const T>, View<T>> syrk_ = syrk<T>();
  Kernel<View<const T>, View<const T>, View<T>> gemm_ = gemm<T>();
  double flops_ = 0;
  bool count_ = true;
};

// One candidate of the search for the top-level tile size B: the gemm rate of the slowest
// process timed (the accelerators, or every process where there are none).
struct TileRate {
  index_t B = 0;
  double gflops = 0;
};

// Step 1 of Song et al.'s tuning: B is "the minimal matrix size that provides the maximum
// performance for the dominant GPU kernel", searched from 128 to 2048. The accelerator
// processes (every process where none is one) time the gemm tile kernel C -= A·Bᵀ on B×B tiles,
// as the factorisation launches it, for B in 128, 256, ..., 2048 and the layout's own B, those
// at most n (and --tune-n) and multiples of the thin tile b and of g; the smallest B whose
// slowest rate is within 5 % of the best is chosen. Returns the candidates measured.
template <class T>
std::vector<TileRate> tune_tile_size(Environment& env, const Options& o, const Spec& spec) {
  const index_t given = spec.get_int("B", 0);
  const index_t thin = spec.get_int("b", 1);
  const index_t step = spec.get_int("g", thin);
  const index_t limit = o.tune_n > 0 ? std::min<index_t>(o.n, o.tune_n) : o.n;
  std::vector<index_t> candidates = {given};
  for (index_t b = 128; b <= 2048; b *= 2) {
    if (b != given && b <= limit && b % thin == 0 && b % step == 0) candidates.push_back(b);
  }
  std::sort(candidates.begin(), candidates.end());
  const bool accelerator = device(env).kind() != DeviceKind::cpu;
  const int accelerators = allreduce(accelerator ? 1 : 0, ReduceOp::sum);
  const bool timed = accelerator || accelerators == 0;
  const Kernel<View<const T>, View<const T>, View<T>> kernel = gemm<T>();
  std::vector<TileRate> rates;
  for (const index_t b : candidates) {
    double rate = std::numeric_limits<double>::infinity();
    if (timed) {
      const Shape square = Shape::extents({b, b});
      Tile<T> a(square), bt(square), c(square);
      for (Tile<T>* t : {&a, &bt, &c}) {
        T* x = t->data();
        for (index_t i = 0; i < b * b; ++i)
          x[i] = static_cast<T>(1e-3 * static_cast<double>(i % 97));
      }
      std::vector<double> seconds;
      for (int rep = 0; rep < 1 + app::tune_repetitions; ++rep) {
        const Timer timer;
        launch(kernel, partition("single", square), in(a), in(bt), inout(c));
        if (rep > 0) seconds.push_back(timer.seconds());
      }
      rate = 2.0 * static_cast<double>(b) * static_cast<double>(b) * static_cast<double>(b) /
             app::median(seconds) * 1e-9;
    }
    rate = allreduce(rate, ReduceOp::min);
    rates.push_back({b, rate});
  }
  return rates;
}

// The smallest B within 5 % of the best rate.
index_t chosen_tile_size(const std::vector<TileRate>& rates) {
  double best = 0;
  for (const TileRate& r : rates) best = std::max(best, r.gflops);
  for (const TileRate& r : rates) {
    if (r.gflops >= 0.95 * best) return r.B;
  }
  return rates.back().B;
}

// A factorisation of --tune's small problem on a layout of it, with what it needs alive.
template <class T>
struct TuneTrial {
  Options options;
  Layout lay;
  Factorisation<T> f;
  std::optional<TaskCholesky<T>> tasks;  // --runtime: the trials on the runtime too
  TuneTrial(Environment& env, const Options& o, const Layout& l)
      : options(o), lay(l), f(env, options, lay) {
    if (options.runtime) tasks.emplace(f.tiling(), f.blocks(), device(env), lay, env);
  }
  // One factorisation: this process's seconds of tile kernels (on the runtime, its workers'
  // seconds over its workers).
  double run() {
    f.restore();
    if (tasks) {
      tasks->run();
      return tasks->busy_s() / tasks->workers();
    }
    app::Clock clock(device(Environment::current()));
    f.run(clock);
    return clock.compute_seconds();
  }
};

// What --tune measured: the candidates for B, then the trials of B_h.
struct Tuning {
  std::vector<TileRate> sizes;
  std::vector<app::TuneStep> steps;
};

// --tune: B (unless --keep-b), then B_h; `lay` becomes the tuned layout.
template <class T>
Tuning tune(Environment& env, const Options& o, Layout& lay) {
  Tuning t;
  if (!o.keep_b && lay.spec_value().name() == "heteroBlockCyclic") {
    const Spec spec = lay.spec_value();
    t.sizes = tune_tile_size<T>(env, o, spec);
    const index_t chosen = chosen_tile_size(t.sizes);
    if (chosen != spec.get_int("B", 0)) {
      // A new B: its host share is estimated afresh (a given bh was a share of the old B).
      Spec resized = spec.with("B", chosen);
      resized.erase("bh");
      lay = layout(resized, lay.topology(), lay.shape());
    }
  }
  t.steps = app::tune_host_share(env, lay, o.tune_n, [&](const Layout& l) -> app::TuneRun {
    Options small = o;
    small.n = l.shape().extent(0);
    small.a_file.clear();
    auto trial = std::make_shared<TuneTrial<T>>(env, small, l);
    return [trial] { return trial->run(); };
  });
  lay = layout(lay.spec_value().with("bh", app::best_host_share(t.steps)), lay.topology(),
               lay.shape());
  return t;
}

// The report's lines and JSON of what --tune measured.
void describe_tuning(const Tuning& t, nlohmann::json& fields, std::vector<std::string>& lines) {
  nlohmann::json sizes = nlohmann::json::array();
  for (const TileRate& r : t.sizes) {
    sizes.push_back({{"B", r.B}, {"gflops", r.gflops}});
    lines.push_back(fmt::format("tuning: B {}: tile gemm at {:.2f} GFLOP/s", r.B, r.gflops));
  }
  if (!t.sizes.empty()) {
    fields["tuning_b"] = sizes;
    fields["tuned_b"] = chosen_tile_size(t.sizes);
  }
  app::describe_host_share(t.steps, fields, lines);
}

template <class T>
int factorise(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  // Each tile kernel is one LAPACK or BLAS call over the whole tile it writes.
  if (!o.run.partition_given.empty() && o.run.partition_given != "single") {
    throw Error(ErrorKind::invalid_argument,
                "hit-cholesky runs each tile kernel as one LAPACK or BLAS call on its tile: "
                "--partition must be single, got '" +
                    o.run.partition_given + "'");
  }
  // The matrix, laid on a grid of processes by the layout chosen by name.
  const Topology topo = topology(o.topology);
  Layout lay = layout(o.layout, topo, Shape::extents({o.n, o.n}));
  if (o.runtime) {
    const std::string refusal = runtime_refusal(o);
    if (!refusal.empty()) throw Error::everywhere(ErrorKind::invalid_argument, refusal);
  }
  const Tuning tuning = o.tune ? tune<T>(env, o, lay) : Tuning{};
  check_and_draw(env, o, lay);
  Factorisation<T> f(env, o, lay);
  std::optional<TaskCholesky<T>> tasks;
  if (o.runtime) tasks.emplace(f.tiling(), f.blocks(), device(env), lay, env);
  runtime::ExecutionReport last;  // of the last repetition (--runtime): the timeline
  harness.repeat([&](int) { f.restore(); },
                 [&](app::Clock& clock) {
                   if (!tasks) return f.run(clock);
                   last = tasks->run();
                   app::trace_tasks(env, *tasks, last);
                   clock.compute_seconds_add(tasks->busy_s() / tasks->workers());  // per worker
                 });
  if (tasks && !o.run.svg.empty()) {
    app::write_timeline(
        env, o.run.svg,
        fmt::format("hit-cholesky --runtime, n = {}, b = {}, {} processes: tasks per "
                    "worker",
                    o.n, o.b, env.size()),
        *tasks, last);
  }
  clear_upper(f.blocks());
  harness.set_work(tasks ? tasks->flops() : f.flops());
  if (!o.c_out.empty()) hit::write(o.c_out, lay.shape(), f.blocks(), env.comm());
  const app::CheckResult check = o.run.check ? verify(env, o, lay, f.blocks()) : app::CheckResult{};
  const double time = harness.median_time();
  const double n = static_cast<double>(o.n);
  const int t = f.tiling().count();
  const index_t w = f.tiling().max_width();
  nlohmann::json fields = {{"app", "cholesky"},
                           {"n", o.n},
                           {"tiles", t},
                           {"tile_max", w},
                           {"lookahead", o.lookahead},
                           {"topology", {{"name", topo.name()}, {"dims", topo.dims()}}},
                           {"layout", lay.spec()},
                           {"partition", "single"}};
  std::vector<std::string> lines;
  describe_tuning(tuning, fields, lines);
  if (tasks) {
    fields["runtime"] = app::runtime_json(tasks->tasks(), tasks->messages(), tasks->runner());
  }
  char headline[256];
  std::snprintf(headline, sizeof headline,
                "hit-cholesky: %ldx%ld, %s, %d ranks, %d tile columns (widest %ld), %s", o.n, o.n,
                o.run.type.c_str(), env.size(), t, static_cast<long>(w), lay.spec().c_str());
  return harness.report({.fields = fields,
                         .headline = headline,
                         .throughput = {"gflops", time > 0 ? n * n * n / 3 / time * 1e-9 : 0.0},
                         .work_unit = "flops",
                         .lines = lines,
                         .check = check});
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return factorise<T>(env, o); });
}

}  // namespace hit::cholesky
