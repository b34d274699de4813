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
  int workers() const noexcept { return workers_; }
  // The last run's places but the messages': what each ran.
  const std::vector<runtime::PlaceReport>& places() const noexcept { return places_; }
  // The tile directory's counters of the last run on an accelerator (zeros on host cores).
  const runtime::TransferCounters& transfers() const noexcept { return transfers_; }
  // The last run's span and its workers' seconds in task bodies (summed).
  double span_s() const noexcept { return span_s_; }
  double busy_s() const noexcept { return busy_s_; }
  // The flops of this process's tile kernels (each task's cost is its kernel's flops).
  double flops() const;
  double critical_path() const { return flow_.global_graph().critical_path(); }
  // For the timeline (--svg), by task of this process's graph: its kernel ("potrf", "trsm",
  // "syrk", "gemm", or "send" and "receive"), the task with its tiles, and the names of the last
  // run's places.
  std::string kind_name(runtime::TaskId t) const;
  std::string describe(runtime::TaskId t) const;
  std::vector<std::string> place_names() const;

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
  // The bytes of the tiles task t uses (on the device together while it runs).
  std::uint64_t task_bytes(runtime::TaskId t) const;
  runtime::ExecutionReport run_on_device();
  // The device's free bytes, or Error(out_of_memory) when this process's largest task does not fit.
  std::uint64_t device_room() const;
  // Seconds per flop of a kernel kind on the host (0) or the device (1): the median of its last
  // measurements; unmeasured, the other's, else 1 ns (the first tasks then spread over both).
  double seconds_per_flop(Kind kind, int device) const;
  void record(Kind kind, int device, double seconds, double flops);
  // The kernel's body for a device kind (an emulated device runs the cpu body).
  template <class K>
  const typename K::Body& body_of(const K& kernel, DeviceKind kind) const;
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
  int host_workers_;
  int workers_;
  std::vector<Tile<T>> tiles_;  // the lower triangle, tile (i, j) at id(i, j); null: another's
  runtime::ProcessFlow flow_;
  std::vector<Step> steps_;  // per global task
  runtime::TransferCounters transfers_;
  double span_s_ = 0;
  double busy_s_ = 0;
  std::vector<runtime::PlaceReport> places_;
  // Per kernel kind and host / device: the last seconds per flop measured (kept across runs).
  mutable std::mutex rates_mutex_;
  std::array<std::array<std::vector<double>, 2>, 4> rates_;
  Kernel<View<T>, index_t> potrf_ = potrf<T>();
  Kernel<View<const T>, View<T>> trsm_ = trsm<T>();
  Kernel<View<const T>, View<T>> syrk_ = syrk<T>();
  Kernel<View<const T>, View<const T>, View<T>> gemm_ = gemm<T>();
};

// --svg of a --runtime run: every process's tasks and messages of `report` on one time axis,
// written by rank 0. Collective.
template <class T>
void write_timeline(Environment& env, const std::string& path, const std::string& title,
                    const TaskCholesky<T>& tasks, const runtime::ExecutionReport& report) {
  const std::vector<std::string> names = tasks.place_names();
  const runtime::TimelineText text{
      .title = title,
      .places = names,
      .kind = [&](runtime::TaskId t) { return tasks.kind_name(t); },
      .describe = [&](runtime::TaskId t) { return tasks.describe(t); }};
  const std::string svg = runtime::timeline_svg(env.comm(), report, text);
  collectively(env.comm(), [&] {
    if (env.rank() == 0) write_file_atomically(path, svg);
  });
}

}  // namespace hit::cholesky
