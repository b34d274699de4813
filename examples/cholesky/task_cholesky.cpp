#include "task_cholesky.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>

#include "hit/device.hpp"
#include "tile_kernels.hpp"

namespace hit::cholesky {

namespace {

// A kernel parameter over a whole host tile (rows, unit column steps).
template <class V, class T>
V view_of(Tile<T>& t) {
  V v;
  v.data = t.data();
  v.rank = 2;
  for (int k = 0; k < 2; ++k) {
    v.extent[k] = t.shape().extent(k);
    v.stride[k] = t.step(k);
    v.origin[k] = t.shape()[k].begin();
    v.step[k] = 1;
  }
  return v;
}

// The cpu body of a tile kernel, called directly on a worker thread (the device's launch is for
// one caller at a time; the runtime's workers are several).
template <class K>
const auto& cpu_body(const K& kernel) {
  return *kernel.body(DeviceKind::cpu);
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
    return "--runtime runs one process on its host cores so far (the run has " +
           std::to_string(env.size()) + " processes)";
  }
  if (device(env).kind() != DeviceKind::cpu) {
    return "--runtime runs on host cores so far (the process is bound to " + device(env).label() +
           ")";
  }
  return {};
}

template <class T>
TaskCholesky<T>::TaskCholesky(const Tiling& tiling, std::vector<Tile<T>>& blocks, int workers)
    : tiling_(tiling), workers_(std::max(workers, 1)) {
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
  KernelContext ctx;
  View<T> a = view_of<View<T>>(tile(s.i, s.j));
  switch (s.kind) {
    case Kind::potrf:
      cpu_body(potrf_)(ctx, a, static_cast<index_t>(s.k));
      break;
    case Kind::trsm:
      cpu_body(trsm_)(ctx, view_of<View<const T>>(tile(s.k, s.k)), a);
      break;
    case Kind::syrk:
      cpu_body(syrk_)(ctx, view_of<View<const T>>(tile(s.i, s.k)), a);
      break;
    case Kind::gemm:
      cpu_body(gemm_)(ctx, view_of<View<const T>>(tile(s.i, s.k)),
                      view_of<View<const T>>(tile(s.j, s.k)), a);
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
runtime::ExecutionReport TaskCholesky<T>::run() {
  const std::vector<runtime::Place> places = {{runtime::host_memory, workers_}};
  const std::vector<int> place_of(graph_.size(), 0);
  const OneBlasThread one;
  return runtime::execute(graph_, places, place_of, [this](runtime::TaskId t, int) { body(t); });
}

template class TaskCholesky<double>;
template class TaskCholesky<float>;

}  // namespace hit::cholesky
