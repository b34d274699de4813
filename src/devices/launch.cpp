// hit::launch: staging, execution, copy-back, out-of-core chunks, residency, the device lock and
// launch records (docs/devices.md §7–§9).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "devices/backends.hpp"
#include "devices/host_pool.hpp"
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

// ---- geometry of staged copies -----------------------------------------------------------------

namespace {

using steady = std::chrono::steady_clock;

double monotonic_seconds(steady::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
double seconds_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// How a region is laid out in device memory: dense rows of `pitch` elements.
struct DeviceLayout {
  Shape shape;                            // array indices held (the staged region)
  std::array<index_t, max_rank> alloc{};  // allocated extent per axis (>= shape's, padded)
  index_t pitch = 0;                      // elements per row (alloc of the last axis)
  std::array<index_t, max_rank> strides{};
  std::size_t element_size = 0;
  std::size_t bytes() const {
    if (shape.rank() == 0) return 0;
    return static_cast<std::size_t>(strides[0] * alloc[0]) * element_size;
  }
};

index_t round_up(index_t a, index_t m) {
  return m <= 1 ? a : (a + m - 1) / m * m;
}

DeviceLayout device_layout(const Shape& region, std::size_t element_size, const Partition& p,
                           std::size_t row_alignment) {
  DeviceLayout d;
  d.shape = region;
  d.element_size = element_size;
  const int r = region.rank();
  for (int k = 0; k < r; ++k) {
    index_t e = region.extent(k);
    if (p.pad_to_blocks() && p.rank() == r) e = round_up(e, p.block_extent(k));
    d.alloc[static_cast<std::size_t>(k)] = std::max<index_t>(e, 1);
  }
  // Rows start row_alignment bytes apart when the element size divides it.
  index_t align_elems = 1;
  if (row_alignment > element_size && row_alignment % element_size == 0) {
    align_elems = static_cast<index_t>(row_alignment / element_size);
  }
  if (r >= 2) {
    d.alloc[static_cast<std::size_t>(r - 1)] =
        round_up(d.alloc[static_cast<std::size_t>(r - 1)], align_elems);
  }
  d.pitch = d.alloc[static_cast<std::size_t>(r - 1)];
  index_t s = 1;
  for (int k = r - 1; k >= 0; --k) {
    d.strides[static_cast<std::size_t>(k)] = s;
    s *= d.alloc[static_cast<std::size_t>(k)];
  }
  return d;
}

RawView device_view(void* data, const DeviceLayout& d) {
  RawView v;
  v.data = static_cast<unsigned char*>(data);
  v.rank = d.shape.rank();
  for (int k = 0; k < v.rank; ++k) {
    v.extent[k] = d.shape.extent(k);
    v.stride[k] = d.strides[static_cast<std::size_t>(k)];
    v.origin[k] = d.shape[k].begin();
    v.step[k] = d.shape[k].stride();
  }
  return v;
}

RawView host_view(const HostRegion& h) {
  RawView v;
  v.data = static_cast<unsigned char*>(h.data);
  v.rank = h.shape.rank();
  for (int k = 0; k < v.rank; ++k) {
    v.extent[k] = h.shape.extent(k);
    v.stride[k] = h.steps[static_cast<std::size_t>(k)];
    v.origin[k] = h.shape[k].begin();
    v.step[k] = h.shape[k].stride();
  }
  return v;
}

// Element offset of array index `first` of `sub` in a region laid out over `shape` with `steps`.
index_t offset_in(const Shape& shape, const std::array<index_t, max_rank>& steps,
                  const Shape& sub) {
  index_t off = 0;
  for (int k = 0; k < shape.rank(); ++k) {
    off += (sub[k].begin() - shape[k].begin()) / shape[k].stride() *
           steps[static_cast<std::size_t>(k)];
  }
  return off;
}

// A host bounce buffer: a dense copy of `region` (its data is `bytes`). A copy out through it
// is scattered into `target` (the elements of `sub`) once the device has synchronised.
struct PackedHost {
  std::vector<unsigned char> bytes;
  HostRegion region;
  bool scatter = false;
  HostRegion target;
  Shape sub;
};
using Packed = std::vector<std::unique_ptr<PackedHost>>;

std::array<index_t, max_rank> dense_steps(const Shape& s) {
  std::array<index_t, max_rank> out{};
  index_t st = 1;
  for (int k = s.rank() - 1; k >= 0; --k) {
    out[static_cast<std::size_t>(k)] = st;
    st *= std::max<index_t>(1, s.extent(k));
  }
  return out;
}

// Element-wise copy of the elements of `sub` from one host region to another.
void copy_elements(const HostRegion& to, const HostRegion& from, const Shape& sub) {
  if (sub.empty()) return;
  const int r = sub.rank();
  const auto es = static_cast<index_t>(to.element_size);
  std::array<index_t, max_rank> ta{}, fa{}, ext{};
  for (int k = 0; k < r; ++k) {
    const auto u = static_cast<std::size_t>(k);
    ta[u] = to.steps[u] * (sub[k].stride() / to.shape[k].stride());
    fa[u] = from.steps[u] * (sub[k].stride() / from.shape[k].stride());
    ext[u] = sub.extent(k);
  }
  auto* tb = static_cast<unsigned char*>(to.data) + offset_in(to.shape, to.steps, sub) * es;
  const auto* fb =
      static_cast<const unsigned char*>(from.data) + offset_in(from.shape, from.steps, sub) * es;
  const index_t width = sub.extent(r - 1);
  const auto tl = ta[static_cast<std::size_t>(r - 1)], fl = fa[static_cast<std::size_t>(r - 1)];
  detail::for_each_row(r, ext, ta, fa, [&](const detail::Steps&, index_t a, index_t b) {
    for (index_t j = 0; j < width; ++j) {
      std::memcpy(tb + (a + j * tl) * es, fb + (b + j * fl) * es, static_cast<std::size_t>(es));
    }
  });
}

// Copies region `sub` (array indices inside both) between host and device, on `stream`.
// Unit-step rows on both sides go directly (2-D copies; one per region when the outer axes
// allow). Otherwise through a dense host buffer (kept in `packed`): strided host rows are packed
// before a copy in; a copy out brings the device box around `sub` into the buffer, and the
// elements of `sub` are scattered to the host after the device synchronises (finish()).
void copy_region(Device& dev, bool to_device, const HostRegion& host, void* device_data,
                 const DeviceLayout& d, const Shape& sub, int stream, Packed& packed) {
  if (sub.empty()) return;
  const int r = sub.rank();
  const std::size_t es = host.element_size;
  std::array<index_t, max_rank> hsteps{}, dsteps{};
  for (int k = 0; k < r; ++k) {
    const auto u = static_cast<std::size_t>(k);
    hsteps[u] = host.steps[u] * (sub[k].stride() / host.shape[k].stride());
    dsteps[u] = d.strides[u] * (sub[k].stride() / d.shape[k].stride());
  }
  const auto last = static_cast<std::size_t>(r - 1);
  if (hsteps[last] != 1 || dsteps[last] != 1) {
    auto buf = std::make_unique<PackedHost>();
    // The device elements from the first to the last of `sub` on every axis.
    Shape box = sub;
    for (int k = 0; k < r; ++k)
      box = box.with_sig(k, Sig(sub[k].begin(), sub[k].last() + 1, d.shape[k].stride()));
    if (to_device && !(box == sub)) {
      throw Error(ErrorKind::internal, "copies into a device cover whole staged rows");
    }
    buf->bytes.resize(static_cast<std::size_t>(box.size()) * es);
    buf->region = HostRegion{buf->bytes.data(), es, box, dense_steps(box)};
    if (to_device) {
      copy_elements(buf->region, host, sub);
    } else {
      buf->scatter = true;
      buf->target = host;
      buf->sub = sub;
    }
    copy_region(dev, to_device, buf->region, device_data, d, box, stream, packed);
    packed.push_back(std::move(buf));
    return;
  }
  auto* hbase = static_cast<unsigned char*>(host.data) +
                offset_in(host.shape, host.steps, sub) * static_cast<index_t>(es);
  auto* dbase = static_cast<unsigned char*>(device_data) +
                offset_in(d.shape, d.strides, sub) * static_cast<index_t>(es);
  const index_t width = sub.extent(r - 1);
  // Merge the outer axes into rows where both sides are evenly spaced.
  int first_row_axis = std::max(0, r - 2);
  index_t rows = r >= 2 ? sub.extent(r - 2) : 1;
  while (first_row_axis > 0) {
    const auto k = static_cast<std::size_t>(first_row_axis - 1);
    const auto k1 = static_cast<std::size_t>(first_row_axis);
    if (hsteps[k] != hsteps[k1] * sub.extent(first_row_axis) ||
        dsteps[k] != dsteps[k1] * sub.extent(first_row_axis)) {
      break;
    }
    rows *= sub.extent(first_row_axis - 1);
    --first_row_axis;
  }
  const std::size_t hp =
      static_cast<std::size_t>(r >= 2 ? hsteps[static_cast<std::size_t>(r - 2)] : width) * es;
  const std::size_t dp =
      static_cast<std::size_t>(r >= 2 ? dsteps[static_cast<std::size_t>(r - 2)] : width) * es;
  const std::size_t wb = static_cast<std::size_t>(width) * es;
  const auto one = [&](index_t ha, index_t da) {
    unsigned char* h = hbase + ha * static_cast<index_t>(es);
    unsigned char* dv = dbase + da * static_cast<index_t>(es);
    if (to_device) {
      dev.copy_in(dv, dp, h, hp, wb, static_cast<std::size_t>(rows), stream);
    } else {
      dev.copy_out(h, hp, dv, dp, wb, static_cast<std::size_t>(rows), stream);
    }
  };
  if (first_row_axis == 0) {
    one(0, 0);
    return;
  }
  // One 2-D copy per combination of the axes before first_row_axis (for_each_row walks all
  // but its last axis: give it those axes and a dummy last one).
  std::array<index_t, max_rank> ext{};
  for (int k = 0; k < first_row_axis; ++k) ext[static_cast<std::size_t>(k)] = sub.extent(k);
  ext[static_cast<std::size_t>(first_row_axis)] = 1;
  detail::for_each_row(first_row_axis + 1, ext, hsteps, dsteps,
                       [&](const detail::Steps&, index_t ha, index_t da) { one(ha, da); });
}

// After the device synchronised: scatter what came back through bounce buffers.
void finish(const Packed& packed) {
  for (const auto& p : packed) {
    if (p->scatter) copy_elements(p->target, p->region, p->sub);
  }
}

// What an OUT or INOUT tile brings back: where it meets the domain (the kernel computes the
// domain), or all of it when it is not indexed like the domain.
Shape copy_back_region(const Shape& own, const Shape& domain) {
  if (own.rank() != domain.rank()) return own;
  const Shape meet = own.intersect(domain);
  return meet.empty() ? own : meet;
}

// Device memory of one launch, freed when it goes (after the device has finished with it).
class Buffers {
 public:
  explicit Buffers(Device& dev) : dev_(dev) {}
  ~Buffers() {
    try {
      dev_.synchronize();
    } catch (...) {
    }
    for (auto& [p, n] : held_) dev_.deallocate(p, n);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void* get(std::size_t bytes) {
    void* p = dev_.allocate(bytes);
    held_.emplace_back(p, bytes);
    return p;
  }
  std::uint64_t bytes() const {
    std::uint64_t n = 0;
    for (const auto& [p, b] : held_) n += b;
    return n;
  }

 private:
  Device& dev_;
  std::vector<std::pair<void*, std::size_t>> held_;
};

// Waits for everything queued on the device (errors ignored: the caller is already failing or
// synchronises itself), so locals that queued work uses are destroyed after it ran.
class Drain {
 public:
  explicit Drain(Device& dev) : dev_(dev) {}
  ~Drain() {
    try {
      dev_.synchronize();
    } catch (...) {
    }
  }
  Drain(const Drain&) = delete;
  Drain& operator=(const Drain&) = delete;

 private:
  Device& dev_;
};

class DeviceLockGuard {
 public:
  explicit DeviceLockGuard(DeviceShare& share) : share_(share) { share_.lock(); }
  ~DeviceLockGuard() { share_.unlock(); }
  DeviceLockGuard(const DeviceLockGuard&) = delete;
  DeviceLockGuard& operator=(const DeviceLockGuard&) = delete;

 private:
  DeviceShare& share_;
};

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

// ---- residency ---------------------------------------------------------------------------------

ResidentState::~ResidentState() {
  if (device != nullptr && !device->uses_host_memory() && device_data != nullptr && !device_block) {
    device->deallocate(device_data, bytes);
  }
  if (device != nullptr) {
    for (const auto& [p, owner] : pinned) device->unpin_host(p);
  }
}

namespace {

DeviceLayout resident_layout(const ResidentState& s) {
  Partition none;
  return device_layout(s.host.shape, s.host.element_size, none,
                       default_row_alignment(s.device->kind()));
}

// Page-locks the host buffer now in `s` (once per buffer): a resident tile's host side is copied
// to and from the device on every communication, so it is staged from pinned memory (CUDA).
void pin_current(ResidentState& s) {
  if (s.device->uses_host_memory() || s.spilled) return;
  for (const auto& [p, owner] : s.pinned) {
    if (p == s.host.data) return;
  }
  // The host region of a resident is a tile's whole (dense) allocation.
  const auto bytes = static_cast<std::size_t>(s.host.shape.size()) * s.host.element_size;
  if (s.device->pin_host(s.host.data, bytes)) s.pinned.emplace_back(s.host.data, s.keep_alive);
}

// A state for `host` on `dev`, with no device copy yet.
std::shared_ptr<ResidentState> new_state(Device& dev, DeviceShare& share, HostRegion host,
                                         Shape own, std::shared_ptr<void> keep_alive) {
  auto s = std::make_shared<ResidentState>();
  s->device = &dev;
  s->share = &share;
  s->host = host;
  s->own = std::move(own);
  s->keep_alive = std::move(keep_alive);
  return s;
}

}  // namespace

std::shared_ptr<ResidentState> make_resident(Environment& env, HostRegion host, Shape own,
                                             std::shared_ptr<void> keep_alive) {
  if (host.shape.is_null()) {
    throw Error(ErrorKind::invalid_argument, "cannot keep the null tile resident on a device");
  }
  auto s = new_state(device(env), PhysicalTopology::of(env).device_share(), host, std::move(own),
                     std::move(keep_alive));
  if (s->device->uses_host_memory()) {
    s->device_data = host.data;
    s->host_modified = false;
    return s;
  }
  const DeviceLayout d = resident_layout(*s);
  s->bytes = d.bytes();
  s->pitch = d.pitch;
  try {
    s->device_data = s->device->allocate(s->bytes);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::out_of_memory) throw;
    // Too large for the device: the host keeps it and launches stage it, so an outOfCore
    // partition still runs (with the single partition the launch reports the same shortage).
    log::rank(log::Level::info, fmt::format("a resident tile of {} bytes does not fit on {}: kept "
                                            "on the host, staged by each launch",
                                            s->bytes, s->device->label()));
    s->spilled = true;
    s->bytes = 0;
    s->device_data = nullptr;
    return s;
  }
  pin_current(*s);
  return s;
}

namespace {

// Where `inner` starts in a device allocation laid out for `outer` (same extents on every axis but
// the first, unit strides), in bytes; -1 when it is not inside.
std::ptrdiff_t offset_within(const DeviceLayout& outer, const Shape& inner) {
  const Shape& o = outer.shape;
  if (o.rank() != inner.rank() || inner.empty() || !o.includes(inner)) return -1;
  for (int k = 0; k < o.rank(); ++k) {
    if (o[k].stride() != 1 || inner[k].stride() != 1) return -1;
    if (k > 0 && o[k] != inner[k]) return -1;
  }
  return static_cast<std::ptrdiff_t>((inner[0].begin() - o[0].begin()) * outer.strides[0] *
                                     static_cast<index_t>(outer.element_size));
}

// Puts s's device copy inside `block`, an allocation for `reach`, at `offset` bytes.
void place_in_block(ResidentState& s, std::shared_ptr<void> block, const Shape& reach,
                    std::ptrdiff_t offset) {
  s.device_data = static_cast<unsigned char*>(block.get()) + offset;
  s.device_block = std::move(block);
  s.device_reach = reach;
  const DeviceLayout d = resident_layout(s);
  s.bytes = d.bytes();
  s.pitch = d.pitch;
}

}  // namespace

std::shared_ptr<ResidentState> make_resident_within(Environment& env, HostRegion host, Shape own,
                                                    std::shared_ptr<void> keep_alive,
                                                    const HostRegion& reach) {
  Device& dev = device(env);
  const DeviceLayout outer = device_layout(reach.shape, reach.element_size, Partition(),
                                           default_row_alignment(dev.kind()));
  const std::ptrdiff_t offset = offset_within(outer, host.shape);
  if (dev.uses_host_memory() || offset < 0) {
    return make_resident(env, host, std::move(own), std::move(keep_alive));
  }
  void* base = nullptr;
  try {
    base = dev.allocate(outer.bytes());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::out_of_memory) throw;
    // No room for the reach: a copy of the block alone (or none: spilled), moved by copying.
    return make_resident(env, host, std::move(own), std::move(keep_alive));
  }
  auto s = new_state(dev, PhysicalTopology::of(env).device_share(), host, std::move(own),
                     std::move(keep_alive));
  const std::size_t bytes = outer.bytes();
  place_in_block(*s,
                 std::shared_ptr<void>(base, [&dev, bytes](void* p) { dev.deallocate(p, bytes); }),
                 reach.shape, offset);
  pin_current(*s);
  return s;
}

std::shared_ptr<ResidentState> resident_within(ResidentState& old, HostRegion host, Shape own,
                                               std::shared_ptr<void> keep_alive) {
  if (old.spilled) return nullptr;
  auto s = new_state(*old.device, *old.share, host, std::move(own), std::move(keep_alive));
  s->host_modified = old.host_modified;
  s->device_modified = old.device_modified;
  if (old.device->uses_host_memory()) {
    s->device_data = host.data;
    return s;
  }
  if (!old.device_block) return nullptr;
  const DeviceLayout outer = device_layout(old.device_reach, host.element_size, Partition(),
                                           default_row_alignment(old.device->kind()));
  const std::ptrdiff_t offset = offset_within(outer, host.shape);
  if (offset < 0) return nullptr;
  place_in_block(*s, old.device_block, old.device_reach, offset);
  // The host buffer is the same: its pins go on with the new state.
  s->pinned = std::move(old.pinned);
  old.pinned.clear();
  return s;
}

void resident_fetch(ResidentState& s, const Shape& region) {
  if (s.spilled || !s.device_modified || s.device->uses_host_memory() || region.empty()) return;
  DeviceLockGuard lock(*s.share);
  Packed packed;
  copy_region(*s.device, false, s.host, s.device_data, resident_layout(s), region, 0, packed);
  s.device->synchronize();
  finish(packed);
}

void resident_publish(ResidentState& s, const Shape& region) {
  // A stale device copy is sent whole by the next launch anyway.
  if (s.spilled || s.host_modified || s.device->uses_host_memory() || region.empty()) return;
  DeviceLockGuard lock(*s.share);
  Packed packed;
  copy_region(*s.device, true, s.host, s.device_data, resident_layout(s), region, 0, packed);
  s.device->synchronize();
}

void resident_prefetch(ResidentState& s, int stream) {
  if (s.spilled || !s.host_modified || s.device->uses_host_memory()) return;
  Packed packed;
  copy_region(*s.device, true, s.host, s.device_data, resident_layout(s), s.host.shape, stream,
              packed);
  // A strided host region went through a bounce buffer, which must outlive the copy.
  if (!packed.empty()) s.device->synchronize(stream);
  s.host_modified = false;
}

void resident_rebind(ResidentState& s, void* host_data, std::shared_ptr<void> keep_alive) {
  s.host.data = host_data;
  s.keep_alive = std::move(keep_alive);
  if (s.device->uses_host_memory()) s.device_data = host_data;
  pin_current(s);
}

void resident_sync_to_host(ResidentState& s) {
  if (s.spilled || !s.device_modified || s.device->uses_host_memory()) return;
  DeviceLockGuard lock(*s.share);
  const DeviceLayout d = resident_layout(s);
  Packed packed;
  copy_region(*s.device, false, s.host, s.device_data, d, s.own, 0, packed);
  s.device->synchronize();
  finish(packed);
  s.device_modified = false;
}

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
                const Invoke& invoke, LaunchRecord& rec) {
  Packed packed;  // bounce buffers outlive the device memory and the drain below
  Buffers buffers(dev);
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
                 const Invoke& invoke, LaunchRecord& rec) {
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
  Buffers buffers(dev);
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
    const auto acquired = steady::now();
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
    } else if (partition.out_of_core()) {
      run_chunked(dev, partition, args, invoke, rec);
    } else {
      run_staged(dev, partition, args, invoke, rec);
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
