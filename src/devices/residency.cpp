// Device-resident tiles (hit::Resident): their device copies, the transfers that keep the two
// sides current, and the policy of a device shared by several ranks (residency.hpp,
// docs/devices.md).

#include "devices/residency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "devices/backends.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/core/log.hpp"
#include "hit/topology/device_params.hpp"

namespace hit::detail {

DeviceLayout resident_layout(const ResidentState& s) {
  Partition none;
  return device_layout(s.host.shape, s.host.element_size, none,
                       default_row_alignment(s.device->kind()));
}

std::uint64_t free_bytes(const Device& dev) {
  const std::uint64_t capacity = dev.capacity();
  const std::uint64_t used = dev.used();
  return capacity > used ? capacity - used : 0;
}

ResidentState::~ResidentState() {
  if (registry != nullptr) registry->remove(*this);
  if (device != nullptr && !device->uses_host_memory() && device_data != nullptr && !device_block) {
    device->deallocate(device_data, bytes);
  }
  if (device != nullptr) {
    for (const auto& [p, owner] : pinned) device->unpin_host(p);
  }
}

void evict(ResidentState& s) {
  if (!s.on_device() || s.spilled || s.device->uses_host_memory()) return;
  Device& dev = *s.device;
  if (s.device_modified) {
    // Only what launches wrote is newer on the device (OUT/INOUT results cover the tile's own
    // elements). While its owner waits in a communication, that communication may be sending
    // parts of it from the host: they were fetched from the device before, so the same values
    // are written over them.
    Packed packed;
    copy_region(dev, false, s.host, resident_layout(s).at(s.device_data), s.own, 0, packed);
    dev.synchronize();
    finish(packed);
  } else {
    dev.synchronize();
  }
  if (s.device_block) {
    s.device_block.reset();  // freed with the last block that shares it
    s.device_reach = Shape();
  } else {
    dev.deallocate(s.device_data, s.bytes);
  }
  s.device_data = nullptr;
  s.host_modified = true;
  s.device_modified = false;
  dev.count_eviction(s.bytes);
  event_trace(Environment::current())
      .instant("host", "eviction", "eviction from " + dev.label(), EventTrace::now(),
               {{"bytes", static_cast<double>(s.bytes)}});
}

// ---- the registry of this process's copies -----------------------------------------------------

namespace {

bool holds_memory(const ResidentState& s) {
  return s.on_device() && !s.spilled && !s.device->uses_host_memory();
}

// How long a launch waits for other ranks to give up room before it reports the shortage.
double yield_timeout_seconds(Environment& env) {
  const auto text = env.config().get("device-yield-timeout");
  if (!text) return 60.0;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !(v > 0)) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("HIT_DEVICE_YIELD_TIMEOUT must be a positive number of seconds, got '{}'",
                    *text));
  }
  return v;
}

}  // namespace

ResidentRegistry::ResidentRegistry(Environment& env)
    : env_(env), share_(PhysicalTopology::of(env).device_share()) {
  // Alone on its device a process never has to give anything up: no hook, no cost.
  if (share_.ranks() > 1) {
    env.set_while_waiting([this] { yield_if_wanted(); });
    hooked_ = true;
  }
}

ResidentRegistry::~ResidentRegistry() {
  if (hooked_) env_.set_while_waiting({});
  for (ResidentState* s : states_) s->registry = nullptr;
}

void ResidentRegistry::add(ResidentState& s) {
  states_.push_back(&s);
  s.registry = this;
}

void ResidentRegistry::remove(ResidentState& s) noexcept {
  const auto it = std::find(states_.begin(), states_.end(), &s);
  if (it != states_.end()) {
    *it = states_.back();
    states_.pop_back();
  }
  s.registry = nullptr;
  // Its memory goes with it (after this): what the others see is updated at the next publish.
}

std::uint64_t ResidentRegistry::held_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const ResidentState* s : states_) {
    if (holds_memory(*s)) n += s->bytes;
  }
  return n;
}

std::uint64_t ResidentRegistry::idle_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const ResidentState* s : states_) {
    if (holds_memory(*s) && s->in_use == 0) n += s->bytes;
  }
  return n;
}

std::uint64_t ResidentRegistry::evict_idle(DeviceShare& share, std::uint64_t free_goal) {
  std::uint64_t given = 0;
  for (;;) {
    ResidentState* oldest = nullptr;
    for (ResidentState* s : states_) {
      if (s->share != &share || !holds_memory(*s) || s->in_use > 0) continue;
      if (oldest == nullptr || s->last_use < oldest->last_use) oldest = s;
    }
    if (oldest == nullptr || free_bytes(*oldest->device) >= free_goal) break;
    given += oldest->bytes;
    evict(*oldest);
  }
  publish(share);
  return given;
}

void ResidentRegistry::evict_all(DeviceShare& share) {
  for (ResidentState* s : states_) {
    if (s->share == &share) evict(*s);
  }
  publish(share);
}

void ResidentRegistry::publish(DeviceShare& share) const noexcept {
  if (share.ranks() <= 1) return;
  std::uint64_t n = 0;
  for (const ResidentState* s : states_) {
    if (s->share == &share && holds_memory(*s)) n += s->bytes;
  }
  share.publish_resident(n);
}

void ResidentRegistry::yield_if_wanted() {
  const std::uint64_t wanted = share_.wanted_bytes().load(std::memory_order_relaxed);
  if (wanted == 0 || share_.held() || idle_bytes() == 0) return;
  DeviceLockGuard lock(share_);
  evict_idle(share_, wanted);
}

// ---- the resident arguments of one launch ------------------------------------------------------

LaunchResidency::LaunchResidency(Environment& env, Device& dev, DeviceShare& share,
                                 const std::vector<LaunchArg>& args)
    : env_(env), dev_(dev), share_(share) {
  for (const LaunchArg& a : args) {
    ResidentState* s = a.resident.get();
    if (s == nullptr || s->spilled || s->device->uses_host_memory()) continue;
    if (std::find(begin(), end(), s) != end()) continue;
    if (count_ == inline_args) more_.assign(inline_.begin(), inline_.end());
    if (count_ < inline_args) {
      inline_[count_] = s;
    } else {
      more_.push_back(s);
    }
    ++count_;
    ++s->in_use;
    if (s->registry != nullptr) s->registry->touch(*s);
  }
}

LaunchResidency::~LaunchResidency() {
  for (ResidentState* s : *this) --s->in_use;
}

ResidentRegistry& LaunchResidency::registry() {
  return env_.extension<ResidentRegistry>();
}

std::uint64_t LaunchResidency::resident_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const ResidentState* s : *this) n += s->bytes;
  return n;
}

std::uint64_t LaunchResidency::placed_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const ResidentState* s : *this) {
    if (s->on_device()) n += s->bytes;
  }
  return n;
}

void LaunchResidency::place(AllocationTally& tally) {
  bool placed = false;
  for (ResidentState* s : *this) {
    if (s->on_device()) continue;
    // (Its bytes are counted among the resident ones when this fails, not as asked.)
    tally.allocating = true;
    s->device_data = dev_.allocate(s->bytes);
    tally.allocating = false;
    s->host_modified = true;  // the new copy holds nothing yet
    s->device_modified = false;
    placed = true;
  }
  if (placed) registry().publish(share_);
}

bool LaunchResidency::make_room(DeviceLockGuard& lock, const AllocationTally& tally,
                                const std::string& kernel, bool out_of_core) {
  const std::uint64_t need = resident_bytes() + tally.allocated + tally.asked;
  const std::uint64_t capacity = dev_.capacity();
  const auto mine = [&] { return placed_bytes(); };
  // 1. This rank's own idle copies, least recently used first.
  if (need > mine()) registry().evict_idle(share_, need - mine());
  const bool room = free_bytes(dev_) + mine() >= need;
  // Room by the count that an allocation still refused twice (a fragmented GPU): say so.
  const bool refused_twice = room && room_for_ == need;
  room_for_ = room ? need : 0;
  if (room && !refused_twice) return false;
  const std::string what = fmt::format(
      "device {} is out of memory: launch of '{}' on rank {} needs {} ({} for its resident tiles, "
      "{} staged)",
      dev_.label(), kernel, env_.rank(), human_bytes(static_cast<double>(need)),
      human_bytes(static_cast<double>(resident_bytes())),
      human_bytes(static_cast<double>(tally.allocated + tally.asked)));
  // 2. More than the device holds: nothing another rank gives up can help.
  if (refused_twice) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{}, and the device refused it with {} free: its free memory is in "
                            "pieces too small; {}",
                            what, human_bytes(static_cast<double>(free_bytes(dev_))),
                            memory_remedies({"run fewer ranks on it"}, out_of_core)));
  }
  if (need > capacity) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{}, more than the device's {}: {}", what,
                            human_bytes(static_cast<double>(capacity)),
                            memory_remedies({"use a device with more memory",
                                             "run more processes (each gets a smaller part)"},
                                            out_of_core)));
  }
  // 3. Alone on the device: what holds the memory is this process's (other launches' buffers, a
  //    device shared with another program).
  if (share_.ranks() <= 1) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("{}, with {} free of {}: {} are held by this process's other device "
                            "memory (not resident tiles); {}",
                            what, human_bytes(static_cast<double>(free_bytes(dev_))),
                            human_bytes(static_cast<double>(capacity)),
                            human_bytes(static_cast<double>(dev_.used())),
                            memory_remedies({"free it"}, out_of_core)));
  }
  // 4. Ask the ranks sharing the device: hold nothing while waiting (so that two ranks that
  //    wait never wait for each other), say how much is wanted, and let the others use the lock
  //    to give up their idle copies.
  registry().evict_all(share_);
  if (share_.start_time_sharing()) {
    log::rank(log::Level::info,
              fmt::format("{} is time-shared from now on: its {} ranks do not fit at once (rank "
                          "{} needs {} for one launch, {} are free), so idle resident copies give "
                          "way to the rank that launches",
                          dev_.label(), share_.ranks(), env_.rank(),
                          human_bytes(static_cast<double>(need)),
                          human_bytes(static_cast<double>(free_bytes(dev_)))));
  }
  struct Wanted {
    DeviceShare& share;
    std::uint64_t bytes;
    ~Wanted() { share.wanted_bytes() -= bytes; }
  } wanted{share_, need};
  share_.wanted_bytes() += need;
  lock.unlock();
  const double timeout = yield_timeout_seconds(env_);
  const auto start = std::chrono::steady_clock::now();
  for (long spins = 0; free_bytes(dev_) < need; ++spins) {
    env_.check_announcements();  // a rank that failed gives nothing back
    env_.progress();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout) {
      std::string holders;
      for (int i = 0; i < share_.ranks(); ++i) {
        const std::uint64_t b = share_.resident_of(i);
        if (b == 0 || share_.sharers()[static_cast<std::size_t>(i)] == env_.rank()) continue;
        holders += fmt::format("{}rank {} ({})", holders.empty() ? "" : ", ",
                               share_.sharers()[static_cast<std::size_t>(i)],
                               human_bytes(static_cast<double>(b)));
      }
      throw Error(ErrorKind::out_of_memory,
                  fmt::format("{}, and waited {:.0f} s for the ranks sharing it to give up room "
                              "({} free of {}; resident: {}): a rank blocked outside hitmap++'s "
                              "launches and communication cannot give way; give the device more "
                              "memory, bind fewer ranks to it, or raise HIT_DEVICE_YIELD_TIMEOUT",
                              what, waited, human_bytes(static_cast<double>(free_bytes(dev_))),
                              human_bytes(static_cast<double>(capacity)),
                              holders.empty() ? "none" : holders));
    }
    if (spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  lock.lock();
  return true;
}

void LaunchResidency::yield_if_wanted() {
  // The launch is over: its copies are idle now.
  for (ResidentState* s : *this) --s->in_use;
  count_ = 0;
  const std::uint64_t wanted = share_.wanted_bytes().load(std::memory_order_relaxed);
  if (wanted == 0) return;
  registry().evict_idle(share_, wanted);
}

// ---- making and moving resident copies ---------------------------------------------------------

namespace {

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

// A state for `host` on `dev`, with no device copy yet, in `registry`.
std::shared_ptr<ResidentState> new_state(ResidentRegistry* registry, Device& dev,
                                         DeviceShare& share, Region host, Shape own,
                                         std::shared_ptr<void> keep_alive) {
  auto s = std::make_shared<ResidentState>();
  s->device = &dev;
  s->share = &share;
  s->host = host;
  s->own = std::move(own);
  s->keep_alive = std::move(keep_alive);
  if (registry != nullptr && !dev.uses_host_memory()) registry->add(*s);
  return s;
}

// While other ranks wait for room on a shared device, a new copy waits for its first launch.
bool defer_allocation(DeviceShare& share) {
  return share.ranks() > 1 && (share.time_sharing() || share.wanted_bytes().load() > 0);
}

}  // namespace

std::shared_ptr<ResidentState> make_resident(Environment& env, Region host, Shape own,
                                             std::shared_ptr<void> keep_alive) {
  if (host.shape.is_null()) {
    throw Error(ErrorKind::invalid_argument, "cannot keep the null tile resident on a device");
  }
  Device& dev = device(env);
  DeviceShare& share = PhysicalTopology::of(env).device_share();
  if (dev.uses_host_memory()) {
    auto s = new_state(nullptr, dev, share, host, std::move(own), std::move(keep_alive));
    s->device_data = host.data;
    s->host_modified = false;
    return s;
  }
  auto& registry = env.extension<ResidentRegistry>();
  auto s = new_state(&registry, dev, share, host, std::move(own), std::move(keep_alive));
  const DeviceLayout d = resident_layout(*s);
  s->bytes = d.bytes();
  s->pitch = d.pitch;
  if (s->bytes > dev.capacity()) {
    // Too large for the device: the host keeps it and launches stage it, so an outOfCore
    // partition still runs (with the single partition the launch reports the same shortage).
    log::rank(log::Level::info, fmt::format("a resident tile of {} bytes does not fit on {}: kept "
                                            "on the host, staged by each launch",
                                            s->bytes, dev.label()));
    registry.remove(*s);
    s->spilled = true;
    s->bytes = 0;
    return s;
  }
  pin_current(*s);
  if (defer_allocation(share)) return s;
  try {
    s->device_data = dev.allocate(s->bytes);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::out_of_memory) throw;
    // Held by others now: the first launch that uses it finds room (residency.hpp).
    return s;
  }
  registry.publish(share);
  return s;
}

namespace {

// Where `inner` starts in a device allocation laid out for `outer` (same extents on every axis but
// the first, unit strides), in bytes; -1 when it is not inside.
std::ptrdiff_t offset_within(const DeviceLayout& outer, const Shape& inner) {
  const Shape& o = outer.region.shape;
  if (o.rank() != inner.rank() || inner.empty() || !o.includes(inner)) return -1;
  for (int k = 0; k < o.rank(); ++k) {
    if (o[k].stride() != 1 || inner[k].stride() != 1) return -1;
    if (k > 0 && o[k] != inner[k]) return -1;
  }
  return static_cast<std::ptrdiff_t>(outer.region.offset_of(inner) *
                                     static_cast<index_t>(outer.region.element_size));
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

std::shared_ptr<ResidentState> make_resident_within(Environment& env, Region host, Shape own,
                                                    std::shared_ptr<void> keep_alive,
                                                    const Region& reach) {
  Device& dev = device(env);
  const DeviceLayout outer = device_layout(reach.shape, reach.element_size, Partition(),
                                           default_row_alignment(dev.kind()));
  const std::ptrdiff_t offset = offset_within(outer, host.shape);
  DeviceShare& share = PhysicalTopology::of(env).device_share();
  if (dev.uses_host_memory() || offset < 0 || defer_allocation(share)) {
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
  auto& registry = env.extension<ResidentRegistry>();
  auto s = new_state(&registry, dev, share, host, std::move(own), std::move(keep_alive));
  const std::size_t bytes = outer.bytes();
  place_in_block(*s,
                 std::shared_ptr<void>(base, [&dev, bytes](void* p) { dev.deallocate(p, bytes); }),
                 reach.shape, offset);
  pin_current(*s);
  registry.publish(share);
  return s;
}

std::shared_ptr<ResidentState> resident_within(ResidentState& old, Region host, Shape own,
                                               std::shared_ptr<void> keep_alive) {
  if (old.spilled) return nullptr;
  if (!old.device->uses_host_memory() && (!old.on_device() || !old.device_block)) return nullptr;
  auto s =
      new_state(old.registry, *old.device, *old.share, host, std::move(own), std::move(keep_alive));
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
  if (!s.on_device()) return;  // given up meanwhile: written back
  Packed packed;
  copy_region(*s.device, false, s.host, resident_layout(s).at(s.device_data), region, 0, packed);
  s.device->synchronize();
  finish(packed);
}

void resident_publish(ResidentState& s, const Shape& region) {
  // A stale device copy is sent whole by the next launch anyway.
  if (s.spilled || s.host_modified || s.device->uses_host_memory() || region.empty()) return;
  DeviceLockGuard lock(*s.share);
  if (!s.on_device() || s.host_modified) return;
  Packed packed;
  copy_region(*s.device, true, s.host, resident_layout(s).at(s.device_data), region, 0, packed);
  s.device->synchronize();
}

void resident_prefetch(ResidentState& s, int stream) {
  // Without a copy now (given up to another rank), the next launch stages it.
  if (s.spilled || !s.host_modified || s.device->uses_host_memory() || !s.on_device()) return;
  Packed packed;
  copy_region(*s.device, true, s.host, resident_layout(s).at(s.device_data), s.host.shape, stream,
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
  if (!s.on_device() || !s.device_modified) return;
  Packed packed;
  copy_region(*s.device, false, s.host, resident_layout(s).at(s.device_data), s.own, 0, packed);
  s.device->synchronize();
  finish(packed);
  s.device_modified = false;
}

}  // namespace hit::detail
