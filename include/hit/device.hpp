#pragma once
// Device backends (docs/devices.md): one interface over the memory, copies, execution and
// synchronisation of a `cpu` (host cores), `cuda` (a GPU) or `emu` (an emulated accelerator)
// device, and View<T>, the typed window on device memory that kernels receive.
//
// Programs rarely use a Device directly: hit::launch stages tiles and runs kernels on the device
// the rank is bound to (hit::device(env)). The interface is public for kernels, benchmarks and
// tests.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "hit/shape.hpp"
#include "hit/topology/device_binding.hpp"
#include "hit/view.hpp"

namespace hit {

class Environment;
// What a backend gives a body it executes: defined in the devices layer (src/devices/), where the
// backends and the launch make and read it; bodies given to execute() here pass it through.
struct ExecContext;

static_assert(view_max_rank == max_rank, "View and Shape must agree on the largest rank");

// The array indices a view covers.
template <class T>
[[nodiscard]] Shape view_shape(const View<T>& v) {
  Shape s = Shape::of_rank(v.rank);
  for (int k = 0; k < v.rank; ++k) {
    const index_t end =
        v.extent[k] == 0 ? v.origin[k] : v.origin[k] + (v.extent[k] - 1) * v.step[k] + 1;
    s = s.with_sig(k, Sig(v.origin[k], end, v.step[k]));
  }
  return s;
}

// A Box (the plain data kernels get, hit/view.hpp) and the Shape it is.
Box to_box(const Shape& shape);
Shape to_shape(const Box& box);

// A row-major view of `data` over `shape` (rows of `pitch` elements; 0: unpadded).
template <class T>
[[nodiscard]] View<T> make_view(T* data, const Shape& shape, index_t pitch = 0) {
  View<T> v;
  v.data = data;
  v.rank = shape.rank();
  index_t s = 1;
  for (int k = v.rank - 1; k >= 0; --k) {
    v.extent[k] = shape.extent(k);
    v.origin[k] = shape[k].begin();
    v.step[k] = shape[k].stride();
    v.stride[k] = s;
    s *= (k == v.rank - 1 && pitch > 0) ? pitch : v.extent[k];
  }
  return v;
}

// What a device did, for tests, reports and the FPM layer. Copies count regions staged (one per
// tile argument), not rows.
struct DeviceCounters {
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t copies_in = 0;   // host -> device
  std::uint64_t copies_out = 0;  // device -> host
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t executions = 0;
  // Resident device copies given up for another rank sharing the device (docs/devices.md), and
  // their bytes; the copies written back on the way are in copies_out/bytes_out.
  std::uint64_t evictions = 0;
  std::uint64_t evicted_bytes = 0;
  // Times the host waited for the device: synchronize() calls that found work issued since the
  // last wait (a stream synchronised twice in a row counts once; cpu devices never wait), and the
  // seconds the host spent in them.
  std::uint64_t host_waits = 0;
  double host_wait_seconds = 0;
  double copy_seconds = 0;          // time the calling thread spent on synchronous copies
  double execute_seconds = 0;       // measured execution time (with the emulated slowdown)
  double execute_host_seconds = 0;  // the same before an emulated slowdown (the real kernel)
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceKind kind() const noexcept { return kind_; }
  const DeviceBinding& binding() const noexcept { return binding_; }
  // "cpu:0", "cuda:1", "emu:0(mem=64MiB) [emulated]" (made once: every launch records it)
  const std::string& label() const noexcept { return label_; }
  bool emulated() const noexcept { return kind_ == DeviceKind::emu; }
  // True when kernels can use host memory directly (cpu): nothing is staged.
  virtual bool uses_host_memory() const noexcept { return false; }
  // Page-locks host memory that the device copies to and from again and again (the buffers of
  // a resident tile), so those copies run at full bandwidth without a bounce through a driver
  // buffer. Returns false when nothing was done (nothing to undo): a device whose copies do not
  // gain from it, or memory the driver would not lock (the copies then stay pageable).
  virtual bool pin_host(void* /*p*/, std::size_t /*bytes*/) noexcept { return false; }
  virtual void unpin_host(void* /*p*/) noexcept {}
  // Host cores the device's kernels may use (cpu, emu) or the host thread count (cuda).
  int cores() const noexcept { return cores_; }

  // Memory. capacity(): bytes the device can hold (for a device shared by several ranks, all of
  // them together); used(): bytes held now by everyone sharing it.
  virtual std::uint64_t capacity() const = 0;
  virtual std::uint64_t used() const = 0;
  // Throws Error(out_of_memory) naming the device, the size, what is free, and what to do.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
  void fill_zero(void* p, std::size_t bytes, int stream = 0) {
    note_work(stream);
    do_fill_zero(p, bytes, stream);
  }

  // Copies of `rows` rows of `width` bytes between host and device memory, on `stream`
  // (asynchronous with respect to the host on cuda and, for copies, on emu). Counted here, once
  // for every backend; the backend's copy() moves the bytes.
  void copy_in(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows, int stream = 0);
  void copy_out(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                std::size_t width, std::size_t rows, int stream = 0);

  // Runs `body` on `stream`. `problem_bytes` is what the launch staged (it selects the emulated
  // slowdown).
  void execute(const std::function<void(const ExecContext&)>& body, std::uint64_t problem_bytes,
               int stream = 0) {
    note_work(stream);
    do_execute(body, problem_bytes, stream);
  }

  // Streams: 0 and 1 exist on every device (the work of one stream runs in order; two streams may
  // overlap, e.g. transfers of the next chunk with the compute of this one).
  static constexpr int streams = 2;
  // Later work on `waiting` starts only after the work issued so far on `other` is done.
  void wait_for(int waiting, int other) {
    note_work(waiting);
    do_wait_for(waiting, other);
  }
  // The host waits until the work issued on `stream` (on every stream) is done; rethrows what
  // failed there. Counted as one host wait when work was issued since the last wait.
  void synchronize(int stream);
  void synchronize();

  DeviceCounters counters() const;
  void reset_counters();
  // A resident copy of `bytes` was given up (counted by the residency policy, not a backend).
  void count_eviction(std::uint64_t bytes) noexcept {
    ++counters_.evictions;
    counters_.evicted_bytes += bytes;
  }

  // Called again and again by the thread that waits while the device works: in synchronize()
  // on emu and cuda; on cpu, with a hook installed, the kernel runs on a helper thread and the
  // calling thread calls the hook until it ends. Work packages answer other ranks' one-sided
  // requests from it: without a progress thread, MPI progresses only inside MPI calls. Empty:
  // plain waiting (a cpu kernel on the calling thread). The hook must not use the device.
  void set_wait_hook(std::function<void()> hook) { wait_hook_ = std::move(hook); }
  bool has_wait_hook() const noexcept { return static_cast<bool>(wait_hook_); }

 protected:
  const std::function<void()>& wait_hook() const noexcept { return wait_hook_; }
  Device(DeviceKind kind, DeviceBinding binding, int cores);
  // Updated by the backends (copies may run on a helper thread).
  struct AtomicCounters {
    std::atomic<std::uint64_t> allocations{0}, frees{0}, copies_in{0}, copies_out{0}, bytes_in{0},
        bytes_out{0}, executions{0}, evictions{0}, evicted_bytes{0}, host_waits{0};
    std::atomic<std::int64_t> copy_ns{0}, execute_ns{0}, execute_host_ns{0}, host_wait_ns{0};
  };
  AtomicCounters counters_;

  // What the backends implement: the public calls above count, then call these.
  virtual void do_fill_zero(void* p, std::size_t bytes, int stream) = 0;
  virtual void do_execute(const std::function<void(const ExecContext&)>& body,
                          std::uint64_t problem_bytes, int stream) = 0;
  virtual void do_wait_for(int waiting, int other) = 0;
  virtual void do_synchronize(int stream) = 0;

  enum class CopyDirection { to_device, to_host };
  virtual void copy(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                    std::size_t width, std::size_t rows, int stream, CopyDirection direction) = 0;

 private:
  class CountedWait;
  // Work was issued on the stream since its last synchronize() (devices with memory of their own:
  // a cpu device runs its work when issued).
  void note_work(int stream) noexcept {
    if (stream >= 0 && stream < streams && !uses_host_memory())
      issued_[stream].store(true, std::memory_order_relaxed);
  }
  std::atomic<bool> issued_[streams] = {};
  std::function<void()> wait_hook_;
  DeviceKind kind_;
  DeviceBinding binding_;
  int cores_;
  std::string label_;
};

// The device this rank is bound to (created at first use; PhysicalTopology::of(env) must have been
// made collectively before, or this first call must be collective).
Device& device(Environment& env);
Device& device();  // Environment::current()

}  // namespace hit
