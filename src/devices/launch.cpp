// hit::launch: staging, execution, copy-back, out-of-core chunks, residency, the device lock and
// launch records (docs/devices.md §7–§9).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "devices/backends.hpp"
#include "devices/host_pool.hpp"
#include "devices/residency.hpp"
#include "devices/staging.hpp"
#include "hit/core/log.hpp"
#include "hit/device_params.hpp"
#include "hit/kernel.hpp"
#include "hit/physical_topology.hpp"

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

// ---- launch log --------------------------------------------------------------------------------

void LaunchLog::add(LaunchRecord record) {
  Totals& t = totals_[record.kernel];
  ++t.launches;
  t.seconds += record.seconds;
  t.kernel_seconds += record.kernel_seconds;
  t.bytes_in += record.bytes_in;
  t.bytes_out += record.bytes_out;
  if (capacity_ == 0) return;
  // Drop the older half at once: amortised constant time per launch.
  if (records_.size() >= capacity_) {
    records_.erase(records_.begin(),
                   records_.begin() + static_cast<std::ptrdiff_t>(records_.size() - capacity_ / 2));
  }
  records_.push_back(std::move(record));
}

const LaunchRecord& LaunchLog::last() const {
  if (records_.empty()) throw Error(ErrorKind::invalid_argument, "no launch has been recorded");
  return records_.back();
}

LaunchLog::Totals LaunchLog::totals(const std::string& kernel) const {
  auto it = totals_.find(kernel);
  return it == totals_.end() ? Totals{} : it->second;
}

void LaunchLog::clear() {
  records_.clear();
  totals_.clear();
}

LaunchLog& launch_log(Environment& env) {
  return env.extension<LaunchLog>();
}
LaunchLog& launch_log() {
  return launch_log(Environment::current());
}

namespace detail {

// ---- running the blocks of a launch -----------------------------------------------------------

namespace {

using steady = std::chrono::steady_clock;

double monotonic_seconds(steady::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
double seconds_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

using Invoke = std::function<void(const KernelContext&, const std::vector<RawView>&)>;

// Runs the blocks of `p` on the device: once on cuda, block by block on the device's host threads
// elsewhere.
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

namespace {

struct Staged {
  void* data = nullptr;
  DeviceLayout layout;
};

// Stages every argument whole, runs, copies back.
void run_staged(Device& dev, const Partition& p, const std::vector<LaunchArg>& args,
                const Invoke& invoke, LaunchRecord& rec, AllocationTally& tally) {
  Packed packed;  // bounce buffers outlive the device memory and the drain below
  Buffers buffers(dev, &tally);
  std::vector<RawView> views;
  std::vector<Staged> staged;
  Drain drain(dev);  // on an error, queued work finishes before what it uses goes
  std::uint64_t problem = 0;
  for (const auto& a : args) {
    Staged s;
    if (a.resident) {
      ResidentState& r = *a.resident;
      s.layout = resident_layout(r);
      s.data = r.device_data;
      if (a.intent != Intent::out && r.host_modified) {
        copy_region(dev, true, a.host, s.data, s.layout, a.host.shape, 0, packed);
        r.host_modified = false;
      }
    } else {
      s.layout = device_layout(a.host.shape, a.host.element_size, p, p.row_alignment());
      s.data = buffers.get(s.layout.bytes());
      if (a.intent == Intent::out || p.pad_to_blocks()) dev.fill_zero(s.data, s.layout.bytes(), 0);
      if (a.intent != Intent::out)
        copy_region(dev, true, a.host, s.data, s.layout, a.host.shape, 0, packed);
    }
    problem += s.layout.bytes();
    views.push_back(device_view(s.data, s.layout));
    staged.push_back(s);
  }
  rec.problem_bytes = problem;
  const BlocksJob job{dev, p, views, invoke};
  dev.execute([&job](const ExecContext& ec) { job(ec); }, problem, 0);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a.intent == Intent::in) continue;
    if (a.resident) {
      a.resident->device_modified = true;
      a.resident->host_modified = false;
      continue;
    }
    copy_region(dev, false, a.host, staged[i].data, staged[i].layout,
                copy_back_region(a.own, p.domain()), 0, packed);
  }
  dev.synchronize();
  finish(packed);
}

// Out of core: chunk by chunk, two buffers per cut tile, copies on stream 1, compute on stream 0.
void run_chunked(Device& dev, const Partition& p0, const std::vector<LaunchArg>& args,
                 const Invoke& invoke, LaunchRecord& rec, AllocationTally& tally) {
  constexpr int compute = 0;
  constexpr int copies = 1;
  const Shape& domain = p0.domain();
  const Sig rows = domain[0];
  // Which tiles are cut with the domain, and the rows each reads around.
  std::vector<bool> cut(args.size(), false);
  std::vector<std::pair<index_t, index_t>> halo(args.size(), {0, 0});
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    const auto reach = a.reads->axis(0);
    cut[i] = !a.resident && a.host.shape.rank() == domain.rank() && !reach.whole &&
             a.host.shape[0].stride() == rows.stride() && a.host.shape[0].includes(rows);
    if (cut[i]) halo[i] = {reach.before, reach.after};
  }
  const auto staged_region = [&](std::size_t i, const Shape& chunk) {
    const Shape& hs = args[i].host.shape;
    const Sig r = chunk[0].expand(halo[i].first, halo[i].second).intersect(hs[0]);
    return hs.with_sig(0, r);
  };
  // The footprint decides the chunks when the plug-in could not.
  Partition p = p0;
  if (p.chunks().empty()) {
    Footprint f;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto one_row =
          args[i].host.shape.with_sig(0, Sig(rows.begin(), rows.begin() + 1, rows.stride()));
      const DeviceLayout d = device_layout(cut[i] ? one_row : args[i].host.shape,
                                           args[i].host.element_size, p, p.row_alignment());
      if (cut[i]) {
        f.bytes_per_row += d.bytes();
        f.fixed_bytes += static_cast<std::uint64_t>(halo[i].first + halo[i].second) * d.bytes() *
                         static_cast<std::uint64_t>(p.buffers());
      } else if (!args[i].resident) {
        f.fixed_bytes += d.bytes();
      }
    }
    p = p.with_footprint(f);
  }
  const auto& chunks = p.chunks();
  rec.chunks = chunks.size();
  const int nbuf = p.buffers();

  Packed packed;
  Buffers buffers(dev, &tally);
  // Whole tiles once; cut tiles get nbuf buffers as large as their largest chunk.
  std::vector<Staged> whole(args.size());
  std::vector<std::vector<void*>> bufs(args.size());
  std::vector<std::size_t> buf_bytes(args.size(), 0);
  std::uint64_t fixed_bytes = 0;
  Drain drain(dev);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (cut[i]) {
      for (const Shape& c : chunks) {
        buf_bytes[i] = std::max(
            buf_bytes[i],
            device_layout(staged_region(i, c), a.host.element_size, p, p.row_alignment()).bytes());
      }
      for (int b = 0; b < nbuf; ++b) bufs[i].push_back(buffers.get(buf_bytes[i]));
      continue;
    }
    Staged& s = whole[i];
    if (a.resident) {
      s.layout = resident_layout(*a.resident);
      s.data = a.resident->device_data;
      if (a.intent != Intent::out && a.resident->host_modified) {
        copy_region(dev, true, a.host, s.data, s.layout, a.host.shape, copies, packed);
        a.resident->host_modified = false;
      }
    } else {
      s.layout = device_layout(a.host.shape, a.host.element_size, p, p.row_alignment());
      s.data = buffers.get(s.layout.bytes());
      if (a.intent == Intent::out || p.pad_to_blocks())
        dev.fill_zero(s.data, s.layout.bytes(), copies);
      if (a.intent != Intent::out)
        copy_region(dev, true, a.host, s.data, s.layout, a.host.shape, copies, packed);
    }
    fixed_bytes += s.layout.bytes();
  }
  rec.problem_bytes = buffers.bytes() + fixed_bytes;

  const auto chunk_layout = [&](std::size_t i, std::size_t c) {
    return device_layout(staged_region(i, chunks[c]), args[i].host.element_size, p,
                         p.row_alignment());
  };
  const auto stage_in = [&](std::size_t c) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!cut[i]) continue;
      void* b = bufs[i][c % static_cast<std::size_t>(nbuf)];
      const DeviceLayout d = chunk_layout(i, c);
      if (args[i].intent == Intent::out || p.pad_to_blocks())
        dev.fill_zero(b, buf_bytes[i], copies);
      if (args[i].intent != Intent::out)
        copy_region(dev, true, args[i].host, b, d, d.shape, copies, packed);
    }
  };
  const auto stage_out = [&](std::size_t c) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!cut[i] || args[i].intent == Intent::in) continue;
      void* b = bufs[i][c % static_cast<std::size_t>(nbuf)];
      const DeviceLayout d = chunk_layout(i, c);
      copy_region(dev, false, args[i].host, b, d, copy_back_region(args[i].own, chunks[c]), copies,
                  packed);
    }
  };

  stage_in(0);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    std::vector<RawView> views;
    std::uint64_t chunk_bytes = fixed_bytes;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (cut[i]) {
        views.push_back(
            device_view(bufs[i][c % static_cast<std::size_t>(nbuf)], chunk_layout(i, c)));
        chunk_bytes += buf_bytes[i];
      } else {
        views.push_back(device_view(whole[i].data, whole[i].layout));
      }
    }
    const Partition pc = p.chunk(c);
    dev.wait_for(compute, copies);
    dev.execute([&dev, pc, views,
                 &invoke](const ExecContext& ec) { run_blocks(dev, pc, views, ec, invoke); },
                chunk_bytes, compute);
    const bool next = c + 1 < chunks.size();
    if (nbuf == 1) {
      dev.wait_for(copies, compute);
      stage_out(c);
      if (next) stage_in(c + 1);
    } else {
      if (next) stage_in(c + 1);  // overlaps the compute of chunk c
      dev.wait_for(copies, compute);
      stage_out(c);
    }
  }
  // Whole OUT/INOUT tiles come back once everything ran.
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (cut[i] || a.intent == Intent::in) continue;
    if (a.resident) {
      a.resident->device_modified = true;
      a.resident->host_modified = false;
      continue;
    }
    copy_region(dev, false, a.host, whole[i].data, whole[i].layout, copy_back_region(a.own, domain),
                copies, packed);
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

LaunchRecord run_launch(
    Environment& env, const std::string& kernel, const Partition& partition,
    std::vector<LaunchArg> args,
    const std::function<void(const KernelContext&, const std::vector<RawView>&)>& invoke) {
  Device& dev = device(env);
  DeviceShare& share = PhysicalTopology::of(env).device_share();
  if (partition.domain().is_null() || partition.domain().empty()) {
    // Nothing to run (an inactive process): its arguments may be null tiles.
    LaunchRecord none;
    none.kernel = kernel;
    none.device = dev.label();
    none.partition = partition.spec();
    return none;
  }
  if (partition.device_kind() != dev.kind()) {
    throw Error(
        ErrorKind::device,
        fmt::format("launch of '{}': partition '{}' was made for a {} device, but this rank "
                    "is bound to {}",
                    kernel, partition.spec(), partition.device_kind(), dev.label()));
  }
  check_args(kernel, args);
  LaunchRecord rec;
  rec.kernel = kernel;
  rec.device = dev.label();
  rec.partition = partition.spec();
  rec.elements = partition.domain().size();
  const DeviceCounters before = dev.counters();
  const ProgressWhileWaiting progress(env, dev);
  // Three readings of the clock give the wait, the run and the lock's times (each costs tens of
  // nanoseconds on a virtual machine, a noticeable part of an empty launch).
  const auto asked = steady::now();
  {
    DeviceLockGuard lock(share);
    auto acquired = steady::now();
    rec.lock_acquired = monotonic_seconds(acquired);
    rec.wait_seconds = seconds_between(asked, acquired);
    if (dev.uses_host_memory()) {
      std::vector<RawView> views;
      views.reserve(args.size());
      for (const auto& a : args) views.push_back(host_view(a.host));
      std::uint64_t problem = 0;
      for (const auto& a : args)
        problem += static_cast<std::uint64_t>(a.host.shape.size()) * a.host.element_size;
      rec.problem_bytes = problem;
      const BlocksJob job{dev, partition, views, invoke};
      dev.execute([&job](const ExecContext& ec) { job(ec); }, problem, 0);
      dev.synchronize();
    } else {
      LaunchResidency residency(env, dev, share, args);
      // Every allocation of an attempt comes before its kernel runs: an attempt that ran out of
      // memory changed nothing but which copies are current, and runs again once there is room.
      for (;;) {
        AllocationTally tally;
        try {
          residency.place(tally);
          if (partition.out_of_core()) {
            run_chunked(dev, partition, args, invoke, rec, tally);
          } else {
            run_staged(dev, partition, args, invoke, rec, tally);
          }
          break;
        } catch (const Error& e) {
          if (e.kind() != ErrorKind::out_of_memory || !tally.allocating) throw;
          if (residency.make_room(lock, tally, kernel)) {
            // The others had the device meanwhile: the launch's critical section starts again.
            const auto again = steady::now();
            rec.lock_acquired = monotonic_seconds(again);
            rec.wait_seconds = seconds_between(asked, again);
            acquired = again;
          }
        }
      }
      residency.yield_if_wanted();
    }
    const auto done = steady::now();
    rec.seconds = seconds_between(acquired, done);
    rec.lock_released = monotonic_seconds(done);
  }
  // The kernel ran on this thread: what was started before it moves on now.
  if (env.comms_in_flight() > 0) env.progress();
  const DeviceCounters after = dev.counters();
  rec.kernel_seconds = after.execute_seconds - before.execute_seconds;
  rec.host_kernel_seconds = after.execute_host_seconds - before.execute_host_seconds;
  rec.bytes_in = after.bytes_in - before.bytes_in;
  rec.bytes_out = after.bytes_out - before.bytes_out;
  rec.copies_in = after.copies_in - before.copies_in;
  rec.copies_out = after.copies_out - before.copies_out;
  launch_log(env).add(rec);
  return rec;
}

}  // namespace detail
}  // namespace hit
