#include "task_cholesky.hpp"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/timer.hpp"
#include "hit/core/units.hpp"
#include "hit/device.hpp"
#include "tile_kernels.hpp"

namespace hit::cholesky {

namespace {

// Per tile (i, j) of the lower triangle, at TaskCholesky::id(i, j): the process that holds it.
std::vector<int> tile_owners(const Tiling& tiling, const Layout& lay) {
  std::vector<int> owners;
  for (int i = 0; i < tiling.count(); ++i) {
    for (int j = 0; j <= i; ++j) owners.push_back(lay.owner(Index{tiling.cut(i), tiling.cut(j)}));
  }
  return owners;
}

// This process's tiles as views of its blocks (null tiles where another process holds one).
template <class T>
std::vector<Tile<T>> own_tiles(const Tiling& tiling, std::vector<Tile<T>>& blocks,
                               const std::vector<int>& owners, const Layout& lay) {
  const int rank = lay.local().rank;
  std::vector<Tile<T>> tiles;
  for (int i = 0; i < tiling.count(); ++i) {
    for (int j = 0; j <= i; ++j) {
      tiles.emplace_back();
      if (owners[tiles.size() - 1] != rank) continue;
      const Shape s = tiling.tile(i, j);
      const auto holder = std::find_if(blocks.begin(), blocks.end(),
                                       [&](const Tile<T>& b) { return b.shape().includes(s); });
      if (holder == blocks.end()) {
        throw Error(ErrorKind::internal, "hit-cholesky --runtime: no block holds tile " + s.str());
      }
      tiles.back() = holder->select(s);
    }
  }
  return tiles;
}

// Every tile's rows: this process's where they are, the others' sizes only.
template <class T>
std::vector<runtime::HostRows> tile_rows(const Tiling& tiling, std::vector<Tile<T>>& tiles) {
  std::vector<runtime::HostRows> rows;
  std::size_t g = 0;
  for (int i = 0; i < tiling.count(); ++i) {
    for (int j = 0; j <= i; ++j, ++g) {
      const auto row_bytes = static_cast<std::size_t>(tiling.width(j)) * sizeof(T);
      runtime::HostRows r{nullptr, static_cast<std::size_t>(tiling.width(i)), row_bytes, row_bytes};
      if (!tiles[g].is_null()) {
        r.data = tiles[g].data();
        r.pitch_bytes = static_cast<std::size_t>(tiles[g].step(0)) * sizeof(T);
      }
      rows.push_back(r);
    }
  }
  return rows;
}

// Whether tile view b starts where a ends, with the same row pitch: one view can cover both.
template <class V>
bool follows(const V& a, const V& b) {
  return a.pitch() == b.pitch() && b.data == a.data + a.rows() * a.pitch();
}

// How a tile column's runs are cut: into `workers` pieces (the most workers any process has, so
// that they still have a run each to work on), none longer than `longest` tiles (what a device's
// memory holds).
struct RunLimits {
  int workers = 1;
  int longest = 1;
};

// The runs of a tile column: the row tiles i in [from, count) whose tiles (i, col) one process
// owns, consecutive, in pieces within `limits`. emit(first, tiles).
template <class F>
void column_runs(const std::vector<int>& owners, int from, int col, int count, RunLimits limits,
                 F emit) {
  const auto owner = [&](int i) {
    return owners[static_cast<std::size_t>(i) * (static_cast<std::size_t>(i) + 1) / 2 +
                  static_cast<std::size_t>(col)];
  };
  for (int i = from; i < count;) {
    int end = i + 1;
    while (end < count && owner(end) == owner(i)) ++end;
    const int piece =
        std::clamp((end - i + limits.workers - 1) / limits.workers, 1, std::max(limits.longest, 1));
    for (int first = i; first < end; first += piece) emit(first, std::min(piece, end - first));
    i = end;
  }
}

// The limits every process agrees on (each submits the same tasks): the most workers
// of any, and the longest run whose gemm (the run's panel and updated tiles, and the column's
// tile) fits a quarter of the smallest device's free memory, so that a device place still holds
// several tasks' tiles at once (host processes impose none).
RunLimits run_limits(const Tiling& tiling, std::size_t element_bytes,
                     const app::TileTaskRunner& runner) {
  int most[2] = {std::max(runner.workers(), 1), std::numeric_limits<int>::max()};
  if (runner.device().kind() != DeviceKind::cpu) {
    const std::uint64_t free = runner.device_budget();
    const auto side = static_cast<std::uint64_t>(tiling.max_width());
    const std::uint64_t tile = std::max<std::uint64_t>(side * side * element_bytes, 1);
    const std::uint64_t tiles = free / 4 / tile;  // 2 c + 1 of them for a run of c
    most[1] = static_cast<int>(
        std::min<std::uint64_t>(tiles > 1 ? (tiles - 1) / 2 : 1, std::numeric_limits<int>::max()));
  }
  most[1] = -most[1];  // the least, by one MAX reduction
  allreduce(std::span<int>(most), ReduceOp::max);
  return {most[0], -most[1]};
}

}  // namespace

std::string runtime_refusal(const Options& o) {
  if (!o.lookahead) {
    return "--no-lookahead orders the program's loop; --runtime runs tasks by the critical path";
  }
  return {};
}

template <class T>
TaskCholesky<T>::TaskCholesky(const Tiling& tiling, std::vector<Tile<T>>& blocks, Device& device,
                              const Layout& lay, Environment& env)
    : tiling_(tiling),
      device_(device),
      comm_(env.comm()),
      runner_(env, 4, "--runtime"),
      tiles_(own_tiles(tiling, blocks, tile_owners(tiling, lay), lay)),
      flow_(comm_, tile_owners(tiling, lay), tile_rows(tiling, tiles_)) {
  // The right-looking order; the runtime reorders by the tiles' hazards and the critical path.
  const std::vector<int> owners = tile_owners(tiling, lay);
  const RunLimits limits = run_limits(tiling, sizeof(T), runner_);
  const int t = tiling.count();
  for (int k = 0; k < t; ++k) {
    submit({Kind::potrf, k, k, k});
    column_runs(owners, k + 1, k, t, limits, [&](int i, int count) {
      submit({Kind::trsm, i, k, k, count});
    });
    for (int j = k + 1; j < t; ++j) {
      submit({Kind::syrk, j, j, k});
      column_runs(owners, j + 1, j, t, limits, [&](int i, int count) {
        submit({Kind::gemm, i, j, k, count});
      });
    }
  }
}

template <class T>
void TaskCholesky<T>::submit(const Step& s) {
  using runtime::Access;
  const auto w = [&](int i) { return static_cast<double>(tiling_.width(i)); };
  double rows = 0;  // of the tiles the step writes
  for (int q = 0; q < s.count; ++q) rows += w(s.i + q);
  std::vector<runtime::TileAccess> accesses;
  double flops = 0;
  switch (s.kind) {
    case Kind::potrf:
      accesses = {{id(s.k, s.k), Access::read_write}};
      flops = w(s.k) * w(s.k) * w(s.k) / 3;
      break;
    case Kind::trsm:
      accesses = {{id(s.k, s.k), Access::read}};
      for (int q = 0; q < s.count; ++q) accesses.push_back({id(s.i + q, s.k), Access::read_write});
      flops = rows * w(s.k) * w(s.k);
      break;
    case Kind::syrk:
      accesses = {{id(s.j, s.k), Access::read}, {id(s.j, s.j), Access::read_write}};
      flops = w(s.j) * w(s.j) * w(s.k);
      break;
    case Kind::gemm:
      accesses = {{id(s.j, s.k), Access::read}};
      for (int q = 0; q < s.count; ++q) accesses.push_back({id(s.i + q, s.k), Access::read});
      for (int q = 0; q < s.count; ++q) accesses.push_back({id(s.i + q, s.j), Access::read_write});
      flops = 2 * rows * w(s.j) * w(s.k);
      break;
  }
  flow_.add(accesses, flops);
  steps_.push_back(s);
}

template <class T>
std::pair<int, int> TaskCholesky<T>::tile_of(runtime::TileId g) {
  int i = 0;
  while (id(i + 1, 0) <= g) ++i;
  return {i, static_cast<int>(g - id(i, 0))};
}

template <class T>
const typename TaskCholesky<T>::Step& TaskCholesky<T>::step(runtime::TaskId t) const {
  const runtime::TaskId g = flow_.global_task(t);
  if (g < 0) throw Error(ErrorKind::internal, "hit-cholesky --runtime: a message has no step");
  return steps_[static_cast<std::size_t>(g)];
}

template <class T>
std::vector<Shape> TaskCholesky<T>::access_shapes(const Step& s) const {
  switch (s.kind) {
    case Kind::potrf:
      return {tiling_.tile(s.k, s.k)};
    case Kind::syrk:
      return {tiling_.tile(s.j, s.k), tiling_.tile(s.j, s.j)};
    case Kind::trsm: {
      std::vector<Shape> shapes = {tiling_.tile(s.k, s.k)};
      for (int q = 0; q < s.count; ++q) shapes.push_back(tiling_.tile(s.i + q, s.k));
      return shapes;
    }
    case Kind::gemm:
      break;
  }
  std::vector<Shape> shapes = {tiling_.tile(s.j, s.k)};
  for (int q = 0; q < s.count; ++q) shapes.push_back(tiling_.tile(s.i + q, s.k));
  for (int q = 0; q < s.count; ++q) shapes.push_back(tiling_.tile(s.i + q, s.j));
  return shapes;
}

template <class T>
template <class V>
V TaskCholesky<T>::host_view(runtime::TaskId t, std::size_t a, const Shape& shape) const {
  const runtime::HostRows& r = flow_.host_rows(flow_.local_tile(t, a));
  return make_view(static_cast<typename V::value_type*>(r.data), shape,
                   static_cast<index_t>(r.pitch_bytes / sizeof(T)));
}

template <class T>
template <class In, class Out>
typename TaskCholesky<T>::Views TaskCholesky<T>::views(runtime::TaskId t, const Step& s, In in,
                                                       Out out) const {
  const std::vector<Shape> shapes = access_shapes(s);
  const auto& accesses = flow_.graph().accesses(t);
  Views v;
  for (std::size_t a = 0; a < shapes.size(); ++a) {
    if (runtime::writes(accesses[a].mode)) {
      v.out.push_back(out(a, shapes[a]));
    } else {
      v.in.push_back(in(a, shapes[a]));
    }
  }
  return v;
}

template <class T>
void TaskCholesky<T>::body(runtime::TaskId t) {
  const Step& s = step(t);
  const Views v = views(
      t, s,
      [&](std::size_t a, const Shape& shape) { return host_view<View<const T>>(t, a, shape); },
      [&](std::size_t a, const Shape& shape) { return host_view<View<T>>(t, a, shape); });
  call(DeviceKind::cpu, KernelContext{}, s, v);
}

template <class T>
void TaskCholesky<T>::call(DeviceKind kind, const KernelContext& ctx, const Step& s,
                           const Views& v) const {
  // The view over tiles [q0, q1) of a run (`tiles`, consecutive in memory there), in column col.
  const auto over = [&](const auto& tiles, int q0, int q1, int col) {
    const auto& first = tiles[static_cast<std::size_t>(q0)];
    if (q1 - q0 == 1) return first;
    const Shape rows{Sig(tiling_.cut(s.i + q0), tiling_.cut(s.i + q1)), tiling_.range(col)};
    return make_view(first.data, rows, first.pitch());
  };
  // The parts [q0, q1) of the run in which every tile follows the one before in each of `runs`.
  const auto parts = [&](auto each, const auto&... runs) {
    for (int q0 = 0; q0 < s.count;) {
      int q1 = q0 + 1;
      while (q1 < s.count &&
             (follows(runs[static_cast<std::size_t>(q1 - 1)], runs[static_cast<std::size_t>(q1)]) &&
              ...)) {
        ++q1;
      }
      each(q0, q1);
      q0 = q1;
    }
  };
  switch (s.kind) {
    case Kind::potrf:
      runner_.body_of(potrf_, kind)(ctx, v.out[0], static_cast<index_t>(s.k));
      break;
    case Kind::syrk:
      runner_.body_of(syrk_, kind)(ctx, v.in[0], v.out[0]);
      break;
    case Kind::trsm:
      parts([&](int q0,
                int q1) { runner_.body_of(trsm_, kind)(ctx, v.in[0], over(v.out, q0, q1, s.k)); },
            v.out);
      break;
    case Kind::gemm: {
      // in: the column tile (j, k), then the run's panel tiles (i.., k).
      const std::vector<View<const T>> panel(v.in.begin() + 1, v.in.end());
      parts(
          [&](int q0, int q1) {
            runner_.body_of(gemm_, kind)(ctx, over(panel, q0, q1, s.k), v.in[0],
                                         over(v.out, q0, q1, s.j));
          },
          panel, v.out);
      break;
    }
  }
}

template <class T>
double TaskCholesky<T>::flops() const {
  return app::TileTaskRunner::flops(flow_);
}

template <class T>
void TaskCholesky<T>::device_body(runtime::TaskId t, runtime::DeviceTiles& copies) {
  const Step& s = step(t);
  const std::uint64_t bytes = app::TileTaskRunner::task_bytes(flow_, t);
  // The views before the kernel: finding a copy may free dropped ones, which waits for the
  // device's streams, and so must not happen on one of them.
  const Views v = views(
      t, s,
      [&](std::size_t a, const Shape& shape) {
        return copies.view<const T>(flow_.local_tile(t, a), shape);
      },
      [&](std::size_t a, const Shape& shape) {
        return copies.view<T>(flow_.local_tile(t, a), shape);
      });
  // The tiles it writes (a run's, or the one tile (i, j) of potrf and syrk).
  const Shape written{Sig(tiling_.cut(s.i), tiling_.cut(s.i + s.count)), tiling_.range(s.j)};
  runtime::execute_on(device_, to_box(written), bytes,
                      [&](const KernelContext& ctx) { call(device_.kind(), ctx, s, v); });
}

template <class T>
runtime::ExecutionReport TaskCholesky<T>::run() {
  return runner_.run(
      flow_, comm_,
      {.host = [this](runtime::TaskId t) { body(t); },
       .device = [this](runtime::TaskId t,
                        runtime::DeviceTiles& copies) { device_body(t, copies); },
       .kind = [this](runtime::TaskId t) { return static_cast<int>(step(t).kind); }});
}

template <class T>
std::string TaskCholesky<T>::kind_name(runtime::TaskId t) const {
  if (flow_.global_task(t) < 0) return flow_.is_send(t) ? "send" : "receive";
  static const char* names[] = {"potrf", "trsm", "syrk", "gemm"};
  return names[static_cast<std::size_t>(step(t).kind)];
}

template <class T>
std::string TaskCholesky<T>::describe(runtime::TaskId t) const {
  if (flow_.global_task(t) < 0) {
    const auto [i, j] = tile_of(flow_.message_tile(t));
    return flow_.is_send(t)
               ? fmt::format("send tile ({},{}) to process {}", i, j, flow_.message_peer(t))
               : fmt::format("receive tile ({},{}) from process {}", i, j, flow_.message_peer(t));
  }
  const Step& s = step(t);
  if (s.count > 1) {
    return fmt::format("task {}: {} of tiles ({}-{},{}), column {}", flow_.global_task(t),
                       kind_name(t), s.i, s.i + s.count - 1, s.j, s.k);
  }
  return fmt::format("task {}: {} of tile ({},{}), column {}", flow_.global_task(t), kind_name(t),
                     s.i, s.j, s.k);
}

template class TaskCholesky<double>;
template class TaskCholesky<float>;

}  // namespace hit::cholesky
