// hit::launch: staging, execution, copy-back, out-of-core chunks, residency, the device lock and
// launch records (docs/devices.md §7–§9).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "devices/backends.hpp"
#include "devices/host_pool.hpp"
#include "devices/launch_stages.hpp"
#include "devices/residency.hpp"
#include "devices/staging.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/core/log.hpp"
#include "hit/core/program_trace.hpp"
#include "hit/launch.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit {

std::string_view to_string(Intent intent) noexcept {
  switch (intent) {
    case Intent::in:
      return "in";
    case Intent::out:
      return "out";
    case Intent::inout:
      return "inout";
  }
  return "?";
}

Box to_box(const Shape& shape) {
  Box b;
  b.rank = shape.rank();
  for (int k = 0; k < b.rank; ++k) {
    b.begin[k] = shape[k].begin();
    b.end[k] = shape[k].end();
    b.step[k] = shape[k].stride();
  }
  return b;
}

Shape to_shape(const Box& box) {
  if (box.rank == 0) return Shape();
  Shape s = Shape::of_rank(box.rank);
  for (int k = 0; k < box.rank; ++k) {
    s = s.with_sig(k, Sig(box.begin[k], std::max(box.begin[k], box.end[k]), box.step[k]));
  }
  return s;
}

namespace detail {

// ---- running the blocks of a launch -----------------------------------------------------------

void run_blocks(const Device& dev, const Partition& p, const std::vector<RawView>& views,
                const ExecContext& ec, const Invoke& invoke) {
  KernelContext base;
  base.domain = to_box(p.domain());
  const auto g = p.cuda_grid();
  const auto b = p.cuda_block();
  for (int k = 0; k < 3; ++k) {
    base.grid[k] = g[static_cast<std::size_t>(k)];
    base.threads_per_block[k] = b[static_cast<std::size_t>(k)];
  }
  base.cuda_stream = ec.cuda_stream;
  base.cublas = ec.cublas;
  if (dev.kind() == DeviceKind::cuda) {
    base.block = base.domain;
    base.threads = ec.threads;
    invoke(base, views);
    return;
  }
  if (ec.host_pool == nullptr) {
    throw Error(ErrorKind::internal,
                fmt::format("device {} runs host blocks but gave no thread pool", dev.label()));
  }
  const int t = std::max(1, p.threads());
  base.threads = std::max(1, ec.threads / t);
  ec.host_pool->parallel_for(p.block_count(), t, [&](std::int64_t i) {
    const Shape blk = p.block(i);
    if (blk.empty()) return;
    KernelContext ctx = base;
    ctx.block = to_box(blk);
    ctx.block_index = i;
    invoke(ctx, views);
  });
}

namespace {

using steady = std::chrono::steady_clock;

double monotonic_seconds(steady::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
double seconds_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// What Device::execute runs for a launch: one reference, so that the std::function holding it
// keeps it inline (a capture of four references would be allocated on every launch).
struct BlocksJob {
  const Device& dev;
  const Partition& partition;
  const std::vector<RawView>& views;
  const Invoke& invoke;
  void operator()(const ExecContext& ec) const { run_blocks(dev, partition, views, ec, invoke); }
};

void check_args(const std::string& kernel, const std::vector<LaunchArg>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a.host.shape.is_null() || a.host.data == nullptr) {
      if (a.host.shape.is_null() || !a.host.shape.empty()) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("launch of '{}': tile argument {} ({}) is the null tile", kernel, i,
                                to_string(a.intent)));
      }
    }
  }
}

}  // namespace

// ---- the launch --------------------------------------------------------------------------------

[[noreturn]] void throw_missing_implementation(const std::string& kernel, const Device& device,
                                               const std::vector<std::string>& implementations) {
  std::string list;
  for (const auto& i : implementations) list += (list.empty() ? "" : ", ") + i;
  throw Error(
      ErrorKind::device,
      fmt::format("kernel '{}' has no implementation for device {} (kind {}); it has: {}", kernel,
                  device.label(), to_string(device.kind()), list.empty() ? "none" : list));
}

Staged stage_whole(Device& dev, const Partition& p, const LaunchArg& a, int stream,
                   Buffers& buffers, Packed& packed) {
  Staged s;
  if (a.resident) {
    ResidentState& r = *a.resident;
    s.layout = resident_layout(r);
    s.data = r.device_data;
    if (a.intent != Intent::out && r.host_modified) {
      copy_region(dev, true, a.host, s.layout.at(s.data), a.host.shape, stream, packed);
      r.host_modified = false;
    }
    return s;
  }
  s.layout = device_layout(a.host.shape, a.host.element_size, p, p.row_alignment());
  s.data = buffers.get(s.layout.bytes());
  if (a.intent == Intent::out || p.pad_to_blocks()) dev.fill_zero(s.data, s.layout.bytes(), stream);
  if (a.intent != Intent::out)
    copy_region(dev, true, a.host, s.layout.at(s.data), a.host.shape, stream, packed);
  return s;
}

void bring_back_whole(Device& dev, const LaunchArg& a, const Staged& s, const Shape& domain,
                      int stream, Packed& packed) {
  if (a.intent == Intent::in) return;
  if (a.resident) {
    a.resident->device_modified = true;
    a.resident->host_modified = false;
    return;
  }
  copy_region(dev, false, a.host, s.layout.at(s.data),
              a.copied_back_whole ? a.own : copy_back_region(a.own, domain), stream, packed);
}

namespace {

// Every argument resident and none sent from the host: nothing to bring back after the kernel,
// and no copy still reading host memory that the program may write again once the launch returned
// (the buffer a double-buffered shift receives into next).
bool queue_allowed(const std::vector<LaunchArg>& args) {
  return std::all_of(args.begin(), args.end(), [](const LaunchArg& a) {
    return a.resident != nullptr && (a.intent == Intent::out || !a.resident->host_modified);
  });
}

// What a queued kernel runs: its own copies of the views, the partition and the body, since it
// may run after the launch returned.
struct QueuedJob {
  const Device& dev;
  Partition partition;
  std::vector<RawView> views;
  Invoke invoke;
  void operator()(const ExecContext& ec) const { run_blocks(dev, partition, views, ec, invoke); }
};

// Stages every argument whole, runs, copies back. With `may_queue` (queue_allowed), a launch that
// left nothing to the host (no buffer of its own, no bounce buffer) returns with its kernel queued.
void run_staged(Device& dev, const Partition& p, const std::vector<LaunchArg>& args,
                const Invoke& invoke, LaunchRecord& rec, AllocationTally& tally, bool may_queue) {
  Packed packed;  // bounce buffers outlive the device memory and the drain below
  Buffers buffers(dev, &tally);
  std::vector<RawView> views;
  std::vector<Staged> staged;
  Drain drain(dev);  // on an error, queued work finishes before what it uses goes
  // Decided before staging, which sends what the host changed (residents were placed already).
  const bool queue = may_queue && queue_allowed(args);
  std::uint64_t problem = 0;
  for (const auto& a : args) {
    staged.push_back(stage_whole(dev, p, a, 0, buffers, packed));
    problem += staged.back().layout.bytes();
    views.push_back(view_of<unsigned char>(staged.back().layout.at(staged.back().data)));
  }
  rec.problem_bytes = problem;
  rec.queued = queue && buffers.bytes() == 0 && packed.empty();
  const BlocksJob job{dev, p, views, invoke};  // lives until the synchronisation below
  if (rec.queued) {
    auto owned = std::make_shared<const QueuedJob>(QueuedJob{dev, p, views, invoke});
    dev.execute([owned](const ExecContext& ec) { (*owned)(ec); }, problem, 0);
  } else {
    dev.execute([&job](const ExecContext& ec) { job(ec); }, problem, 0);
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    bring_back_whole(dev, args[i], staged[i], p.domain(), 0, packed);
  }
  if (rec.queued) {
    drain.dismiss();
    return;
  }
  dev.synchronize();
  finish(packed);
}

// While communication is in flight, a launch that waits for its device lets MPI progress (the
// device's wait hook), unless the caller installed a hook of its own (work packages do).
class ProgressWhileWaiting {
 public:
  ProgressWhileWaiting(Environment& env, Device& dev) : dev_(dev) {
    if (env.comms_in_flight() > 0 && !dev.uses_host_memory() && !dev.has_wait_hook()) {
      dev.set_wait_hook([&env] { env.progress(); });
      installed_ = true;
    }
  }
  ~ProgressWhileWaiting() {
    if (installed_) dev_.set_wait_hook({});
  }
  ProgressWhileWaiting(const ProgressWhileWaiting&) = delete;
  ProgressWhileWaiting& operator=(const ProgressWhileWaiting&) = delete;

 private:
  Device& dev_;
  bool installed_ = false;
};

}  // namespace

namespace {

// A record of the launch before it runs: what, where, over which partition.
LaunchRecord new_record(const std::string& kernel, const Device& dev, const Partition& p) {
  LaunchRecord rec;
  rec.kernel = kernel;
  rec.device = dev.label();
  rec.partition = p.spec();
  return rec;
}

void check_launch(const std::string& kernel, const Partition& p, const Device& dev,
                  const std::vector<LaunchArg>& args) {
  if (p.device_kind() != dev.kind()) {
    throw Error(ErrorKind::device,
                fmt::format("launch of '{}': partition '{}' was made for a {} device, but this "
                            "rank is bound to {}",
                            kernel, p.spec(), p.device_kind(), dev.label()));
  }
  check_args(kernel, args);
}

// A device that computes in host memory (cpu): the bodies see the tiles' own memory.
void run_in_host_memory(Device& dev, const Partition& p, const std::vector<LaunchArg>& args,
                        const Invoke& invoke, LaunchRecord& rec) {
  std::vector<RawView> views;
  views.reserve(args.size());
  for (const auto& a : args) views.push_back(view_of<unsigned char>(a.host));
  std::uint64_t problem = 0;
  for (const auto& a : args)
    problem += static_cast<std::uint64_t>(a.host.shape.size()) * a.host.element_size;
  rec.problem_bytes = problem;
  const BlocksJob job{dev, p, views, invoke};
  dev.execute([&job](const ExecContext& ec) { job(ec); }, problem, 0);
  dev.synchronize();
}

// A device with memory of its own: residents placed, arguments staged (whole or chunk by chunk),
// the blocks run, results brought back. Every allocation of an attempt comes before its kernel
// runs, so an attempt that ran out of memory changed nothing but which copies are current; it
// runs again once the residency made room, possibly after the lock went to the others and came
// back. Returns when the lock was last acquired (the launch's critical section starts there).
steady::time_point run_in_device_memory(Environment& env, Device& dev, DeviceShare& share,
                                        DeviceLockGuard& lock, const std::string& kernel,
                                        const Partition& p, const std::vector<LaunchArg>& args,
                                        const Invoke& invoke, LaunchRecord& rec,
                                        steady::time_point acquired, bool may_queue) {
  LaunchResidency residency(env, dev, share, args);
  for (;;) {
    AllocationTally tally;
    try {
      residency.place(tally);
      if (p.out_of_core()) {
        run_chunked(dev, p, args, invoke, rec, tally);
      } else {
        run_staged(dev, p, args, invoke, rec, tally, may_queue);
      }
      break;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::out_of_memory || !tally.allocating) throw;
      if (residency.make_room(lock, tally, kernel, p.out_of_core())) acquired = steady::now();
    }
  }
  residency.yield_if_wanted();
  return acquired;
}

// What the device counted between two readings: the kernel's time and the copies.
void add_device_counts(LaunchRecord& rec, const DeviceCounters& before,
                       const DeviceCounters& after) {
  rec.kernel_seconds = after.execute_seconds - before.execute_seconds;
  rec.host_kernel_seconds = after.execute_host_seconds - before.execute_host_seconds;
  rec.bytes_in = after.bytes_in - before.bytes_in;
  rec.bytes_out = after.bytes_out - before.bytes_out;
  rec.copies_in = after.copies_in - before.copies_in;
  rec.copies_out = after.copies_out - before.copies_out;
}

// A dry run's launch: what it would compute and hold, recorded; the tiles a device without
// host memory does not hold would be copied to it (and back, unless only read).
LaunchRecord trace_launch(ProgramTrace& trace, const Device& dev, const KernelCost& cost,
                          const Partition& p, const std::vector<LaunchArg>& args,
                          LaunchRecord rec) {
  TracedLaunch launch;
  if (cost.flops) {
    std::vector<Shape> tiles;
    for (const auto& a : args) tiles.push_back(a.own);
    launch.flops = cost.flops(p.domain(), tiles);
  } else {
    launch.flops = double(p.domain().size()) * cost.flops_per_point;
  }
  launch.compute_bound = cost.compute_bound;
  launch.irregular = cost.irregular;
  for (const auto& a : args) {
    const double bytes = double(a.host.shape.size()) * double(a.host.element_size);
    launch.problem_bytes += bytes;
    if (!dev.uses_host_memory() && !a.resident) {
      launch.staged_bytes += a.intent == Intent::inout ? 2 * bytes : bytes;
    }
  }
  rec.problem_bytes = static_cast<std::uint64_t>(launch.problem_bytes);
  trace.launch(launch);
  return rec;
}

}  // namespace

// The stages of a launch: check, take the device lock (timed), run in host or device memory,
// release, let communication in flight progress, count, log.
LaunchRecord run_launch(Environment& env, const std::string& kernel, const KernelCost& cost,
                        const Partition& partition, std::vector<LaunchArg> args,
                        const Invoke& invoke, Completion completion) {
  Device& dev = device(env);
  DeviceShare& share = PhysicalTopology::of(env).device_share();
  // Nothing to run (an inactive process): its arguments may be null tiles.
  if (partition.domain().is_null() || partition.domain().empty())
    return new_record(kernel, dev, partition);
  check_launch(kernel, partition, dev, args);
  LaunchRecord rec = new_record(kernel, dev, partition);
  rec.elements = partition.domain().size();
  if (ProgramTrace* trace = env.trace()) {
    return trace_launch(*trace, dev, cost, partition, args, std::move(rec));
  }
  const DeviceCounters before = dev.counters();
  const ProgressWhileWaiting progress(env, dev);
  // Three readings of the clock give the wait, the run and the lock's times (each costs tens of
  // nanoseconds on a virtual machine, a noticeable part of an empty launch).
  const auto asked = steady::now();
  {
    DeviceLockGuard lock(share);
    auto acquired = steady::now();
    if (dev.uses_host_memory()) {
      run_in_host_memory(dev, partition, args, invoke, rec);
    } else {
      // Queued only where nothing else needs the device's time or the host's help: the
      // processes sharing a device take turns for whole kernels, and an out-of-core launch
      // brings its chunks back as it goes.
      const bool may_queue =
          completion == Completion::queued && share.ranks() == 1 && !partition.out_of_core();
      acquired = run_in_device_memory(env, dev, share, lock, kernel, partition, args, invoke, rec,
                                      acquired, may_queue);
    }
    const auto done = steady::now();
    rec.lock_acquired = monotonic_seconds(acquired);
    rec.wait_seconds = seconds_between(asked, acquired);
    rec.seconds = seconds_between(acquired, done);
    rec.lock_released = monotonic_seconds(done);
  }
  // The kernel ran on this thread: what was started before it moves on now.
  if (env.comms_in_flight() > 0) env.progress();
  add_device_counts(rec, before, dev.counters());
  if (rec.queued) rec.kernel_seconds = rec.host_kernel_seconds = 0;  // not run yet
  if (EventTrace& trace = event_trace(env); trace.enabled()) {
    if (rec.wait_seconds > 0) {
      trace.span("host", "wait", "wait for " + dev.label(), monotonic_seconds(asked),
                 rec.lock_acquired);
    }
    trace.span("host", "launch", kernel, rec.lock_acquired, rec.lock_released,
               {{"elements", static_cast<double>(rec.elements)},
                {"bytes_in", static_cast<double>(rec.bytes_in)},
                {"bytes_out", static_cast<double>(rec.bytes_out)},
                {"kernel_s", rec.kernel_seconds}});
  }
  launch_log(env).add(rec);
  return rec;
}

}  // namespace detail
}  // namespace hit
