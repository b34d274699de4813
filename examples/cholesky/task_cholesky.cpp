#include "task_cholesky.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

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
                               const std::vector<int>& owners, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
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

// OpenBLAS at one thread while the workers run (each worker is a core), as it was after.
class OneBlasThread {
 public:
  OneBlasThread() : before_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~OneBlasThread() { openblas_set_num_threads(before_); }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int before_;
};

}  // namespace

std::string runtime_refusal(const Options& o) {
  if (!o.lookahead) {
    return "--no-lookahead orders the program's loop; --runtime runs tasks by the critical path";
  }
  return {};
}

template <class T>
TaskCholesky<T>::TaskCholesky(const Tiling& tiling, std::vector<Tile<T>>& blocks, Device& device,
                              const Layout& lay, MPI_Comm comm)
    : tiling_(tiling),
      device_(device),
      comm_(comm),
      host_workers_(device.kind() == DeviceKind::cpu ? std::max(device.cores(), 1)
                                                     : std::max(device.cores() - 1, 0)),
      workers_(host_workers_ + (device.kind() == DeviceKind::cpu ? 0 : 1)),
      tiles_(own_tiles(tiling, blocks, tile_owners(tiling, lay), comm)),
      flow_(comm, tile_owners(tiling, lay), tile_rows(tiling, tiles_)) {
  // The right-looking order; the runtime reorders by the tiles' hazards and the critical path.
  using runtime::Access;
  const int t = tiling.count();
  const auto w = [&](int i) { return static_cast<double>(tiling.width(i)); };
  for (int k = 0; k < t; ++k) {
    flow_.add({{id(k, k), Access::read_write}}, w(k) * w(k) * w(k) / 3);
    steps_.push_back({Kind::potrf, k, k, k});
    for (int i = k + 1; i < t; ++i) {
      flow_.add({{id(k, k), Access::read}, {id(i, k), Access::read_write}}, w(i) * w(k) * w(k));
      steps_.push_back({Kind::trsm, i, k, k});
    }
    for (int j = k + 1; j < t; ++j) {
      flow_.add({{id(j, k), Access::read}, {id(j, j), Access::read_write}}, w(j) * w(j) * w(k));
      steps_.push_back({Kind::syrk, j, j, k});
      for (int i = j + 1; i < t; ++i) {
        flow_.add(
            {{id(i, k), Access::read}, {id(j, k), Access::read}, {id(i, j), Access::read_write}},
            2 * w(i) * w(j) * w(k));
        steps_.push_back({Kind::gemm, i, j, k});
      }
    }
  }
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
    case Kind::trsm:
      return {tiling_.tile(s.k, s.k), tiling_.tile(s.i, s.k)};
    case Kind::syrk:
      return {tiling_.tile(s.j, s.k), tiling_.tile(s.j, s.j)};
    case Kind::gemm:
      break;
  }
  return {tiling_.tile(s.i, s.k), tiling_.tile(s.j, s.k), tiling_.tile(s.i, s.j)};
}

template <class T>
template <class V>
V TaskCholesky<T>::host_view(runtime::TaskId t, std::size_t a, const Shape& shape) const {
  const runtime::HostRows& r = flow_.host_rows(flow_.local_tile(t, a));
  return make_view(static_cast<typename V::value_type*>(r.data), shape,
                   static_cast<index_t>(r.pitch_bytes / sizeof(T)));
}

template <class T>
void TaskCholesky<T>::body(runtime::TaskId t) {
  const Step& s = step(t);
  const std::vector<Shape> shapes = access_shapes(s);
  const Inputs in = inputs(
      s, [&](std::size_t a, const Shape& shape) { return host_view<View<const T>>(t, a, shape); });
  call(DeviceKind::cpu, KernelContext{}, s, host_view<View<T>>(t, shapes.size() - 1, shapes.back()),
       in);
}

template <class T>
template <class F>
typename TaskCholesky<T>::Inputs TaskCholesky<T>::inputs(const Step& s, F view) const {
  const std::vector<Shape> shapes = access_shapes(s);
  Inputs in;
  if (shapes.size() > 1) in.first = view(0, shapes[0]);
  if (shapes.size() > 2) in.second = view(1, shapes[1]);
  return in;
}

template <class T>
void TaskCholesky<T>::call(DeviceKind kind, const KernelContext& ctx, const Step& s, View<T> a,
                           const Inputs& in) const {
  switch (s.kind) {
    case Kind::potrf:
      body_of(potrf_, kind)(ctx, a, static_cast<index_t>(s.k));
      break;
    case Kind::trsm:
      body_of(trsm_, kind)(ctx, in.first, a);
      break;
    case Kind::syrk:
      body_of(syrk_, kind)(ctx, in.first, a);
      break;
    case Kind::gemm:
      body_of(gemm_, kind)(ctx, in.first, in.second, a);
      break;
  }
}

template <class T>
double TaskCholesky<T>::flops() const {
  const runtime::TaskGraph& g = flow_.graph();
  double f = 0;
  for (std::size_t t = 0; t < g.size(); ++t) f += g.cost(static_cast<runtime::TaskId>(t));
  return f;  // messages cost nothing
}

template <class T>
template <class K>
const typename K::Body& TaskCholesky<T>::body_of(const K& kernel, DeviceKind kind) const {
  const typename K::Body* b = kernel.body(kind);
  if (!b && kind == DeviceKind::emu) b = kernel.body(DeviceKind::cpu);
  if (!b) {
    throw Error(ErrorKind::device, "--runtime: kernel '" + kernel.name() + "' has no body for " +
                                       std::string(to_string(kind)) + " devices");
  }
  return *b;
}

template <class T>
std::uint64_t TaskCholesky<T>::task_bytes(runtime::TaskId t) const {
  std::uint64_t bytes = 0;
  for (const runtime::TileAccess& a : flow_.graph().accesses(t)) {
    bytes += flow_.host_rows(a.tile).bytes();
  }
  return bytes;
}

template <class T>
void TaskCholesky<T>::device_body(runtime::TaskId t, runtime::DeviceTiles& copies) {
  const Step& s = step(t);
  const std::uint64_t bytes = task_bytes(t);
  const std::vector<Shape> shapes = access_shapes(s);
  // The views before the kernel: finding a copy may free dropped ones, which waits for the
  // device's streams, and so must not happen on one of them.
  const Inputs in = inputs(s, [&](std::size_t i, const Shape& shape) {
    return copies.view<const T>(flow_.local_tile(t, i), shape);
  });
  const View<T> a = copies.view<T>(flow_.local_tile(t, shapes.size() - 1), shapes.back());
  runtime::execute_on(device_, to_box(tiling_.tile(s.i, s.j)), bytes,
                      [&](const KernelContext& ctx) { call(device_.kind(), ctx, s, a, in); });
}

template <class T>
std::uint64_t TaskCholesky<T>::device_room() const {
  // Every tile valid on the host (the input), none on the device: a fresh directory per run.
  const std::uint64_t free = device_.capacity() - std::min(device_.used(), device_.capacity());
  // A task's tiles are on the device together while it runs: the largest task must fit.
  const runtime::TaskGraph& graph = flow_.graph();
  std::uint64_t largest = 0;
  for (std::size_t t = 0; t < graph.size(); ++t) {
    largest = std::max(largest, task_bytes(static_cast<runtime::TaskId>(t)));
  }
  if (largest > free) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("--runtime: a task's tiles ({}) do not fit in the {} free "
                            "on {}; use smaller tiles (--b) or a device with more memory",
                            human_bytes(static_cast<double>(largest)),
                            human_bytes(static_cast<double>(free)), device_.label()));
  }
  return free;
}

template <class T>
runtime::ExecutionReport TaskCholesky<T>::run_on_device() {
  const std::uint64_t free = device_room();
  const runtime::TaskGraph& graph = flow_.graph();
  // This process's tiles and the replicas of the others' it reads, all valid on the host first.
  runtime::TileDirectory directory({static_cast<std::size_t>(free)});
  // Copies in start when a task is placed and overlap the kernel before it (docs/runtime.md,
  // "Copies while the device computes").
  runtime::DeviceTiles copies(device_, 1, true);
  const std::function<void(int)> fence = [&](int) { copies.fence(); };
  for (std::size_t i = 0; i < flow_.local_tiles(); ++i) {
    const runtime::HostRows& rows = flow_.host_rows(static_cast<runtime::TileId>(i));
    directory.add(rows.bytes());
    copies.add(static_cast<runtime::TileId>(i), rows);
  }
  const runtime::TileMover apply = [&](const runtime::Transfer& x) { copies.apply(x); };
  runtime::ExecutionReport report;
  if (host_workers_ == 0) {
    const std::vector<runtime::Place> places = {{1, 1}};
    report = flow_.run(places, 0, [&](runtime::TaskId t, int) { device_body(t, copies); },
                       {.directory = &directory, .move = &apply, .fence = &fence});
  } else {
    // The host's cores beside the device: place 0 the host workers, place 1 the device.
    const std::vector<runtime::Place> places = {{runtime::host_memory, host_workers_}, {1, 1}};
    const auto timed_body = [&](runtime::TaskId t, int place) {
      const Timer timer;
      if (place == 1) {
        device_body(t, copies);
      } else {
        body(t);
      }
      record(step(t).kind, place, timer.seconds(), graph.cost(t));
    };
    const runtime::TaskCost cost = [&](runtime::TaskId t, int place) {
      return graph.cost(t) * seconds_per_flop(step(t).kind, place);
    };
    const OneBlasThread one;
    report = flow_.run(places, runtime::any_place, timed_body,
                       {.directory = &directory, .move = &apply, .cost = &cost, .fence = &fence});
  }
  for (const runtime::Transfer& x : directory.flush_all()) copies.apply(x);
  transfers_ = directory.counters();
  return report;
}

template <class T>
double TaskCholesky<T>::seconds_per_flop(Kind kind, int device) const {
  const std::lock_guard<std::mutex> lock(rates_mutex_);
  const auto& mine = rates_[static_cast<std::size_t>(kind)];
  for (const int side : {device, 1 - device}) {
    std::vector<double> r = mine[static_cast<std::size_t>(side)];
    if (r.empty()) continue;
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
    return r[r.size() / 2];
  }
  return 1e-9;
}

template <class T>
void TaskCholesky<T>::record(Kind kind, int device, double seconds, double flops) {
  if (!(flops > 0)) return;
  constexpr std::size_t window = 9;  // a running median: one slow task does not move it
  const std::lock_guard<std::mutex> lock(rates_mutex_);
  auto& r = rates_[static_cast<std::size_t>(kind)][static_cast<std::size_t>(device)];
  r.push_back(seconds / flops);
  if (r.size() > window) r.erase(r.begin());
}

template <class T>
runtime::ExecutionReport TaskCholesky<T>::run() {
  runtime::ExecutionReport r;
  std::exception_ptr failure;
  // What one process can refuse before its graph runs is agreed first: its peers would wait
  // for its messages forever.
  try {
    if (device_.kind() != DeviceKind::cpu) device_room();
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm_, failure);
  try {
    if (device_.kind() != DeviceKind::cpu) {
      r = run_on_device();
    } else {
      const std::vector<runtime::Place> places = {{runtime::host_memory, workers_}};
      const OneBlasThread one;
      r = flow_.run(places, 0, [this](runtime::TaskId t, int) { body(t); });
    }
    failure = flow_.failure();
  } catch (...) {
    failure = std::current_exception();
  }
  // A failure on any process, the one that started it (the others' tasks that read its
  // poisoned tiles were skipped), is every process's Error.
  agree(comm_, failure);
  span_s_ = r.seconds;
  places_.clear();
  busy_s_ = 0;
  for (std::size_t p = 0; p < r.places.size(); ++p) {
    if (static_cast<int>(p) == flow_.message_place()) continue;
    places_.push_back(r.places[p]);
    busy_s_ += r.places[p].busy_s;
  }
  return r;
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
  return fmt::format("task {}: {} of tile ({},{}), column {}", flow_.global_task(t), kind_name(t),
                     s.i, s.j, s.k);
}

template <class T>
std::vector<std::string> TaskCholesky<T>::place_names() const {
  // As run() places them: host workers first (none beside a device driven alone), then the
  // device, then the messages (served by the process's main thread).
  std::vector<std::string> names;
  if (device_.kind() == DeviceKind::cpu || host_workers_ > 0) names.emplace_back("host cores");
  if (device_.kind() != DeviceKind::cpu) names.push_back(device_.label());
  names.emplace_back("messages");
  return names;
}

template class TaskCholesky<double>;
template class TaskCholesky<float>;

}  // namespace hit::cholesky
