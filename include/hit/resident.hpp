#pragma once
// hit::Resident<T>: a tile that lives on the device of its process, across launches and
// communications.
//
// A Resident is a handle (copies share everything) over a host tile and, on an accelerator, a
// device copy of the tile's whole allocation (padding and ghost cells included), with
// Kokkos-DualView-like flags saying which side is newer:
//   - hit::launch sends the tile only when the host side was modified (modified_on_host()), and
//     leaves OUT/INOUT results on the device until sync_to_host();
//   - the comm layer (hit/comm.hpp) moves only what it sends and receives between the two sides:
//     a halo copies the faces out and the ghost cells in, a shift the padded buffer once each way;
//   - a double-buffered shift receives into a second host buffer and swaps the two, so host() may
//     name another buffer after a communication: always reach the data through host().
// On a cpu device the device copy is the host tile itself: nothing moves, and the flags stay
// "both current".
//
// An inactive process holds the null Resident (of the null tile): launches and communications
// accept it and do nothing with it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/detail/region.hpp"
#include "hit/shape.hpp"
#include "hit/tile.hpp"

namespace hit {

class Device;
class DeviceShare;
template <class T>
class Resident;

namespace detail {

class ResidentRegistry;

// The device copy of a resident tile (shared by the handles of one Resident).
struct ResidentState {
  Device* device = nullptr;
  DeviceShare* share = nullptr;
  Region host;                       // the tile's whole allocation on the host
  Shape own;                         // the tile's shape() (what OUT/INOUT results cover)
  std::shared_ptr<void> keep_alive;  // the host tile's memory
  void* device_data = nullptr;
  std::size_t bytes = 0;
  // Set when the device copy lies inside a larger allocation made for `device_reach` (a host
  // region on the same strides): the allocation is freed with the last state sharing it, and a
  // block inside the reach takes the copy over in place (resident_within).
  std::shared_ptr<void> device_block;
  Shape device_reach;
  index_t pitch = 0;             // elements per device row
  bool host_modified = true;     // the device copy is stale
  bool device_modified = false;  // the host copy is stale
  // The device could not hold the tile: there is no device copy, the host side is the data, and
  // launches stage the tile as they stage a host tile (an outOfCore partition chunk by chunk).
  bool spilled = false;
  // Host buffers page-locked for the device (kept alive until unpinned, by the destructor).
  std::vector<std::pair<void*, std::shared_ptr<void>>> pinned;
  // On a device shared by several ranks the copy may be given up while the tile is idle
  // (docs/devices.md: written back first when newer), and device_data is then null until a launch
  // stages it again. The registry of this process's copies, the launch that used it last (the
  // least recently used goes first), and the launches using it now (never given up).
  ResidentRegistry* registry = nullptr;
  std::uint64_t last_use = 0;
  int in_use = 0;
  // Whether the device holds a copy now (always on a device that uses host memory).
  bool on_device() const noexcept { return device_data != nullptr; }
  ~ResidentState();
};

// Defined by the devices layer (src/devices/launch.cpp).
std::shared_ptr<ResidentState> make_resident(Environment& env, Region host, Shape own,
                                             std::shared_ptr<void> keep_alive);
void resident_sync_to_host(ResidentState& state);
// Region-wise transfers for communication (array indices inside host.shape), under the device
// lock. fetch: before the host reads `region` (to send it), copy it from the device when the
// device side is newer. publish: after the host wrote `region` (received data), copy it to the
// device when the device side was current, so it stays current without sending the whole tile.
void resident_fetch(ResidentState& state, const Shape& region);
void resident_publish(ResidentState& state, const Shape& region);
// Sends the whole host side to the device on `stream` without waiting for the copy (nothing when
// the device copy is current), and marks the device copy current. Work on the other stream may
// run meanwhile; the caller synchronises `stream` before a launch reads the tile (work packages
// prefetch the next package this way while the current one computes). Not under the device lock.
void resident_prefetch(ResidentState& state, int stream);
// The host side moved to another buffer of the same layout (a double-buffered receive).
void resident_rebind(ResidentState& state, void* host_data, std::shared_ptr<void> keep_alive);
// As make_resident, with the device copy allocated for all of `reach` (a host region that
// includes host.shape and matches it on every axis but the first), so that another block inside
// the reach can take the allocation over (resident_within). Without a separate device copy (cpu)
// or without room for the reach, as make_resident.
std::shared_ptr<ResidentState> make_resident_within(Environment& env, Region host, Shape own,
                                                    std::shared_ptr<void> keep_alive,
                                                    const Region& reach);
// The state of another block whose host region lies inside old's device reach: it shares old's
// device allocation and takes over its flags and pinned buffers, and nothing is copied (the
// elements of both blocks have the same addresses on both sides). Null when old has no reach
// that holds `host`.
std::shared_ptr<ResidentState> resident_within(ResidentState& old, Region host, Shape own,
                                               std::shared_ptr<void> keep_alive);

// The device copy of `r`, null for the null Resident: for the library's own templates (launch
// arguments, communication), not part of Resident's interface.
template <class T>
const std::shared_ptr<ResidentState>& resident_state(const Resident<T>& r) noexcept;

}  // namespace detail

template <class T>
class Resident {
 public:
  using value_type = T;

  // The null Resident (an inactive process's).
  Resident() : shared_(std::make_shared<Shared>()) {}
  // Allocates the device copy now; nothing is sent until a launch reads it. A tile the device
  // cannot hold is kept on the host (spilled()). The null tile gives the null Resident.
  explicit Resident(Tile<T> tile, Environment& env = Environment::current())
      : shared_(std::make_shared<Shared>()) {
    shared_->host = std::move(tile);
    if (shared_->host.is_null()) return;
    shared_->device = detail::make_resident(env, whole(shared_->host), shared_->host.shape(),
                                            keep(shared_->host));
  }
  // A Resident of `tile`, a block inside `storage`'s memory (Tile::within), whose device copy is
  // allocated for all of storage's allocated_shape(): a later block inside `storage` takes it
  // over in place (moved_within). Nothing is sent until a launch reads it.
  static Resident within(const Tile<T>& storage, Tile<T> tile,
                         Environment& env = Environment::current()) {
    Resident r;
    r.shared_->host = std::move(tile);
    if (r.shared_->host.is_null()) return r;
    r.shared_->device =
        detail::make_resident_within(env, whole(r.shared_->host), r.shared_->host.shape(),
                                     keep(r.shared_->host), whole(storage));
    return r;
  }
  // The Resident of `tile`, another block inside the memory of `old`'s (both views of one
  // storage, Tile::within): it takes over old's device copy, which holds the same elements at
  // the same places, and old's flags; nothing moves. `old` must not be used for launches after.
  // The null Resident when old's device copy cannot hold `tile` (then make a new one).
  static Resident moved_within(Resident& old, Tile<T> tile) {
    Resident r;
    if (tile.is_null() || old.is_null() || !old.shared_->device) return r;
    auto state =
        detail::resident_within(*old.shared_->device, whole(tile), tile.shape(), keep(tile));
    if (!state) return r;
    r.shared_->host = std::move(tile);
    r.shared_->device = std::move(state);
    return r;
  }
  // The Resident of this process's block of `layout` (the null one when it holds none); `layout`
  // is a hit::Layout (see Tile<T>::of for the options).
  template <class L>
  static Resident of(const L& layout, LayoutTileOptions options = {},
                     Environment& env = Environment::current()) {
    return Resident(Tile<T>::of(layout, options), env);
  }

  bool is_null() const noexcept { return shared_->host.is_null(); }
  // The host buffer now holding the data (see the header comment on double buffering).
  Tile<T>& host() noexcept { return shared_->host; }
  const Tile<T>& host() const noexcept { return shared_->host; }

  // The host tile was changed by the program: the next launch that reads the tile sends it again.
  // The program's writes supersede whatever launches left on the device: that copy is stale from
  // now on, so neither sync_to_host() nor a communication copies it over the host's data.
  void modified_on_host() {
    if (!shared_->device) return;
    shared_->device->host_modified = true;
    shared_->device->device_modified = false;
  }
  // Brings launch results back to the host tile (nothing when the host copy is current).
  void sync_to_host() {
    if (shared_->device) detail::resident_sync_to_host(*shared_->device);
  }
  bool host_current() const noexcept {
    return !shared_->device || !shared_->device->device_modified;
  }
  bool device_current() const noexcept {
    return !shared_->device || !shared_->device->host_modified;
  }
  // The device could not hold this tile when the Resident was made: it stays on the host, and
  // every launch stages it (see the header comment; Error(out_of_memory) comes from the launch
  // then, unless its partition is out of core).
  bool spilled() const noexcept { return shared_->device && shared_->device->spilled; }
  // The second host buffer of a double-buffered receive: allocated on first use, with host()'s
  // shape, padding and ghost width.
  Tile<T>& spare() {
    if (shared_->spare.is_null() && !is_null()) {
      const Tile<T>& h = shared_->host;
      shared_->spare = Tile<T>(h.shape(), TileOptions{h.padded_shape(), h.ghost()});
    }
    return shared_->spare;
  }
  // Makes the spare buffer the host side (after a receive into it filled it).
  void swap_host_buffers() {
    std::swap(shared_->host, shared_->spare);
    if (shared_->device) {
      detail::resident_rebind(*shared_->device, whole(shared_->host).data, keep(shared_->host));
    }
  }

 private:
  template <class U>
  friend const std::shared_ptr<detail::ResidentState>& detail::resident_state(
      const Resident<U>& r) noexcept;

  struct Shared {
    Tile<T> host;
    Tile<T> spare;
    std::shared_ptr<detail::ResidentState> device;
  };
  static detail::Region whole(const Tile<T>& t) {
    return detail::region_of(t, t.allocated_shape());
  }
  static std::shared_ptr<void> keep(const Tile<T>& t) {
    return std::shared_ptr<void>(std::make_shared<Tile<T>>(t));
  }
  std::shared_ptr<Shared> shared_;
};

template <class T>
const std::shared_ptr<detail::ResidentState>& detail::resident_state(
    const Resident<T>& r) noexcept {
  return r.shared_->device;
}

}  // namespace hit
