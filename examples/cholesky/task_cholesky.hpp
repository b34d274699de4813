#pragma once
// hit-cholesky --runtime: the same tile kernels submitted as tasks of the task runtime
// (docs/runtime.md) in the right-looking order, and run as their tiles are ready, the critical
// path first. Every process submits every task; each runs those that write its tiles (the
// layout's owners), and a tile another process reads reaches it once, in a message, as soon as
// it is written (runtime::ProcessFlow). Within a process: on host cores, one worker thread per
// core (one BLAS thread each); on an accelerator (emu, cuda), the device and the process's other
// cores, each task placed when it is ready where it would finish first (by the seconds per flop
// each measured for its kernel); on an accelerator with one core, every task on the device, each
// tile copied in once and back once (the tile directory keeps them there between tasks).

#include <array>
#include <mutex>
#include <string>
#include <vector>

#include "../common/tile_tasks.hpp"
#include "cholesky.hpp"
#include "cholesky_io.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/layout.hpp"
#include "hit/runtime/device_tiles.hpp"
#include "hit/runtime/executor.hpp"
#include "hit/runtime/process_flow.hpp"
#include "hit/runtime/timeline_svg.hpp"
#include "hit/tile.hpp"
#include "tile_kernels.hpp"

namespace hit::cholesky {

// Why --runtime cannot run this configuration (empty when it can).
std::string runtime_refusal(const Options& o);

// One factorisation's tasks over this process's blocks of the layout `lay`.
template <class T>
class TaskCholesky {
 public:
  // Host workers on the device's cores (all of them on cpu, all but the one that drives an
  // accelerator) and, on an accelerator, the device place; the processes of `env` (the layout's).
  TaskCholesky(const Tiling& tiling, std::vector<Tile<T>>& blocks, Device& device,
               const Layout& lay, Environment& env);
  // Factorises the blocks in place; returns this process's report (per task of its graph, its
  // worker and times). Collective: a failure on any process is every process's Error.
  runtime::ExecutionReport run();
  // This process's tile tasks (sends and receives not counted), and what its messages moved.
  std::size_t tasks() const noexcept { return flow_.tasks(); }
  const runtime::MessageCounters& messages() const noexcept { return flow_.counters(); }
  int workers() const noexcept { return runner_.workers(); }
  const app::TileTaskRunner& runner() const noexcept { return runner_; }
  // The last run's places but the messages', its transfers, span and busy seconds (the runner's).
  const std::vector<runtime::PlaceReport>& places() const noexcept { return runner_.places(); }
  const runtime::TransferCounters& transfers() const noexcept { return runner_.transfers(); }
  double span_s() const noexcept { return runner_.span_s(); }
  double busy_s() const noexcept { return runner_.busy_s(); }
  // The flops of this process's tile kernels (each task's cost is its kernel's flops).
  double flops() const;
  double critical_path() const { return flow_.global_graph().critical_path(); }
  // For the timeline (--svg), by task of this process's graph: its kernel ("potrf", "trsm",
  // "syrk", "gemm", or "send" and "receive"), the task with its tiles, and the names of the last
  // run's places.
  std::string kind_name(runtime::TaskId t) const;
  std::string describe(runtime::TaskId t) const;
  std::vector<std::string> place_names() const { return runner_.place_names(); }

 private:
  enum class Kind : unsigned char { potrf, trsm, syrk, gemm };
  // A task: potrf of tile (k, k); syrk of (j, j) with column k; a trsm of the run of `count`
  // row tiles (i .. i + count - 1, k); a gemm of the run (i .. i + count - 1, j) with column k.
  // A run's tiles are one process's, consecutive in a tile column: one task, one launch, and on
  // the host one BLAS call over the tiles that follow each other in memory (as the program order
  // calls them), instead of a task per tile.
  struct Step {
    Kind kind;
    int i, j, k;
    int count = 1;
  };
  static runtime::TileId id(int i, int j) {
    return static_cast<runtime::TileId>(i) * (i + 1) / 2 + j;
  }
  // The tile (i, j) of a global tile id.
  static std::pair<int, int> tile_of(runtime::TileId g);
  // The step of a task of this process's graph (its own tile tasks only).
  const Step& step(runtime::TaskId t) const;
  // Submits a step with its accesses (in the order access_shapes lists them) and its flops.
  void submit(const Step& s);
  // Task t's access number a as a kernel parameter over a host copy of its tile.
  template <class V>
  V host_view(runtime::TaskId t, std::size_t a, const Shape& shape) const;
  void body(runtime::TaskId t);
  void device_body(runtime::TaskId t, runtime::DeviceTiles& copies);
  // A task's tiles as kernel parameters, in the order of its accesses: those it reads, those it
  // writes; `in(a, shape)` and `out(a, shape)` make access a's.
  struct Views {
    std::vector<View<const T>> in;
    std::vector<View<T>> out;
  };
  template <class In, class Out>
  Views views(runtime::TaskId t, const Step& s, In in, Out out) const;
  // The tiles of a step's accesses, in the order submit() lists them.
  std::vector<Shape> access_shapes(const Step& s) const;
  // The step's kernel calls on its tiles, the same for the host and the device places: one per
  // part of a run whose tiles follow each other in memory.
  void call(DeviceKind kind, const KernelContext& ctx, const Step& s, const Views& v) const;

  const Tiling& tiling_;
  Device& device_;
  MPI_Comm comm_;
  app::TileTaskRunner runner_;
  std::vector<Tile<T>> tiles_;  // the lower triangle, tile (i, j) at id(i, j); null: another's
  runtime::ProcessFlow flow_;
  std::vector<Step> steps_;  // per global task
  Kernel<View<T>, index_t> potrf_ = potrf<T>();
  Kernel<View<const T>, View<T>> trsm_ = trsm<T>();
  Kernel<View<const T>, View<T>> syrk_ = syrk<T>();
  Kernel<View<const T>, View<const T>, View<T>> gemm_ = gemm<T>();
};

}  // namespace hit::cholesky
