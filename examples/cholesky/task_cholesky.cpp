#include "task_cholesky.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "hit/core/timer.hpp"
#include "hit/core/units.hpp"
#include "hit/device.hpp"
#include "tile_kernels.hpp"

namespace hit::cholesky {

namespace {

// A kernel parameter over a whole host tile (rows `step(0)` apart).
template <class V, class T>
V view_of(Tile<T>& t) {
  return make_view(static_cast<typename V::value_type*>(t.data()), t.shape(), t.step(0));
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

std::string runtime_refusal(Environment& env, const Options& o) {
  if (o.tune) return "--runtime does not tune a heteroBlockCyclic host share (--tune) so far";
  if (!o.lookahead) {
    return "--no-lookahead orders the program's loop; --runtime runs tasks by the critical path";
  }
  if (env.size() != 1) {
    return "--runtime runs one process so far (the run has " + std::to_string(env.size()) +
           " processes)";
  }
  return {};
}

template <class T>
TaskCholesky<T>::TaskCholesky(const Tiling& tiling, std::vector<Tile<T>>& blocks, Device& device)
    : tiling_(tiling),
      device_(device),
      host_workers_(device.kind() == DeviceKind::cpu ? std::max(device.cores(), 1)
                                                     : std::max(device.cores() - 1, 0)),
      workers_(host_workers_ + (device.kind() == DeviceKind::cpu ? 0 : 1)) {
  const int t = tiling.count();
  for (int i = 0; i < t; ++i) {
    for (int j = 0; j <= i; ++j) {
      const Shape s = tiling.tile(i, j);
      const auto holder = std::find_if(blocks.begin(), blocks.end(),
                                       [&](const Tile<T>& b) { return b.shape().includes(s); });
      if (holder == blocks.end()) {
        throw Error(ErrorKind::internal, "hit-cholesky --runtime: no block holds tile " + s.str());
      }
      tiles_.push_back(holder->select(s));
    }
  }
  // The right-looking order; the runtime reorders by the tiles' hazards and the critical path.
  using runtime::Access;
  const auto w = [&](int i) { return static_cast<double>(tiling.width(i)); };
  for (int k = 0; k < t; ++k) {
    graph_.add({{id(k, k), Access::read_write}}, w(k) * w(k) * w(k) / 3);
    steps_.push_back({Kind::potrf, k, k, k});
    for (int i = k + 1; i < t; ++i) {
      graph_.add({{id(k, k), Access::read}, {id(i, k), Access::read_write}}, w(i) * w(k) * w(k));
      steps_.push_back({Kind::trsm, i, k, k});
    }
    for (int j = k + 1; j < t; ++j) {
      graph_.add({{id(j, k), Access::read}, {id(j, j), Access::read_write}}, w(j) * w(j) * w(k));
      steps_.push_back({Kind::syrk, j, j, k});
      for (int i = j + 1; i < t; ++i) {
        graph_.add(
            {{id(i, k), Access::read}, {id(j, k), Access::read}, {id(i, j), Access::read_write}},
            2 * w(i) * w(j) * w(k));
        steps_.push_back({Kind::gemm, i, j, k});
      }
    }
  }
}

template <class T>
void TaskCholesky<T>::body(runtime::TaskId t) {
  const Step& s = steps_[static_cast<std::size_t>(t)];
  const Inputs in = inputs(s, [&](int i, int j) { return view_of<View<const T>>(tile(i, j)); });
  call(DeviceKind::cpu, KernelContext{}, s, view_of<View<T>>(tile(s.i, s.j)), in);
}

template <class T>
template <class F>
typename TaskCholesky<T>::Inputs TaskCholesky<T>::inputs(const Step& s, F view) const {
  Inputs in;
  if (s.kind == Kind::trsm) in.first = view(s.k, s.k);
  if (s.kind == Kind::syrk || s.kind == Kind::gemm) in.first = view(s.i, s.k);
  if (s.kind == Kind::gemm) in.second = view(s.j, s.k);
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
  double f = 0;
  for (std::size_t t = 0; t < graph_.size(); ++t) f += graph_.cost(static_cast<runtime::TaskId>(t));
  return f;
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
  for (const runtime::TileAccess& a : graph_.accesses(t)) {
    bytes += static_cast<std::uint64_t>(tiles_[static_cast<std::size_t>(a.tile)].shape().size()) *
             sizeof(T);
  }
  return bytes;
}

template <class T>
void TaskCholesky<T>::device_body(runtime::TaskId t, runtime::DeviceTiles& copies) {
  const Step& s = steps_[static_cast<std::size_t>(t)];
  const std::uint64_t bytes = task_bytes(t);
  // The views before the kernel: finding a copy may free dropped ones, which waits for the
  // device's streams, and so must not happen on one of them.
  const Inputs in =
      inputs(s, [&](int i, int j) { return copies.view<const T>(id(i, j), tiling_.tile(i, j)); });
  const View<T> a = copies.view<T>(id(s.i, s.j), tiling_.tile(s.i, s.j));
  runtime::execute_on(device_, to_box(tiling_.tile(s.i, s.j)), bytes,
                      [&](const KernelContext& ctx) { call(device_.kind(), ctx, s, a, in); });
}

template <class T>
runtime::ExecutionReport TaskCholesky<T>::run_on_device() {
  // Every tile valid on the host (the input), none on the device: a fresh directory per run.
  const std::uint64_t free = device_.capacity() - std::min(device_.used(), device_.capacity());
  // A task's tiles are on the device together while it runs: the largest task must fit.
  std::uint64_t largest = 0;
  for (std::size_t t = 0; t < graph_.size(); ++t) {
    largest = std::max(largest, task_bytes(static_cast<runtime::TaskId>(t)));
  }
  if (largest > free) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("--runtime: a task's tiles ({}) do not fit in the {} free "
                            "on {}; use smaller tiles (--b) or a device with more memory",
                            human_bytes(static_cast<double>(largest)),
                            human_bytes(static_cast<double>(free)), device_.label()));
  }
  runtime::TileDirectory directory({static_cast<std::size_t>(free)});
  runtime::DeviceTiles copies(device_, 1);
  for (std::size_t i = 0; i < tiles_.size(); ++i) {
    Tile<T>& tile = tiles_[i];
    const auto row_bytes = static_cast<std::size_t>(tile.shape().extent(1)) * sizeof(T);
    const auto rows = static_cast<std::size_t>(tile.shape().extent(0));
    directory.add(rows * row_bytes);
    copies.add(static_cast<runtime::TileId>(i),
               {tile.data(), rows, row_bytes, static_cast<std::size_t>(tile.step(0)) * sizeof(T)});
  }
  const auto apply = [&](const runtime::Transfer& x) { copies.apply(x); };
  if (host_workers_ == 0) {
    const std::vector<runtime::Place> places = {{1, 1}};
    const std::vector<int> place_of(graph_.size(), 0);
    runtime::ExecutionReport report = runtime::execute(
        graph_, places, place_of, [&](runtime::TaskId t, int) { device_body(t, copies); },
        directory, apply);
    for (const runtime::Transfer& x : directory.flush_all()) copies.apply(x);
    transfers_ = directory.counters();
    return report;
  }
  // The host's cores beside the device: place 0 the host workers, place 1 the device.
  const std::vector<runtime::Place> places = {{runtime::host_memory, host_workers_}, {1, 1}};
  const std::vector<int> place_of(graph_.size(), runtime::any_place);
  const auto timed_body = [&](runtime::TaskId t, int place) {
    const Timer timer;
    if (place == 1) {
      device_body(t, copies);
    } else {
      body(t);
    }
    record(steps_[static_cast<std::size_t>(t)].kind, place, timer.seconds(), graph_.cost(t));
  };
  const auto cost = [&](runtime::TaskId t, int place) {
    return graph_.cost(t) * seconds_per_flop(steps_[static_cast<std::size_t>(t)].kind, place);
  };
  const OneBlasThread one;
  runtime::ExecutionReport report =
      runtime::execute(graph_, places, place_of, timed_body, directory, apply, cost);
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
  if (device_.kind() != DeviceKind::cpu) {
    r = run_on_device();
  } else {
    const std::vector<runtime::Place> places = {{runtime::host_memory, workers_}};
    const std::vector<int> place_of(graph_.size(), 0);
    const OneBlasThread one;
    r = runtime::execute(graph_, places, place_of, [this](runtime::TaskId t, int) { body(t); });
  }
  span_s_ = r.seconds;
  places_ = r.places;
  busy_s_ = 0;
  for (const runtime::PlaceReport& p : r.places) busy_s_ += p.busy_s;
  return r;
}

template <class T>
std::string TaskCholesky<T>::kind_name(runtime::TaskId t) const {
  static const char* names[] = {"potrf", "trsm", "syrk", "gemm"};
  return names[static_cast<std::size_t>(steps_.at(static_cast<std::size_t>(t)).kind)];
}

template <class T>
std::string TaskCholesky<T>::describe(runtime::TaskId t) const {
  const Step& s = steps_.at(static_cast<std::size_t>(t));
  return fmt::format("task {}: {} of tile ({},{}), column {}", t, kind_name(t), s.i, s.j, s.k);
}

template <class T>
std::vector<std::string> TaskCholesky<T>::place_names() const {
  // As run() places them: host workers first (none beside a device driven alone), then the
  // device.
  std::vector<std::string> names;
  if (device_.kind() == DeviceKind::cpu || host_workers_ > 0) names.emplace_back("host cores");
  if (device_.kind() != DeviceKind::cpu) names.push_back(device_.label());
  return names;
}

template class TaskCholesky<double>;
template class TaskCholesky<float>;

}  // namespace hit::cholesky
