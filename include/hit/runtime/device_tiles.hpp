#pragma once
// The copies of the runtime's tiles in one device's memory: allocated when a tile first needs
// one, moved as the TileDirectory's transfers say, freed when it drops them. With execute_on(),
// what a device place needs to run tile kernels on tiles that stay on the device. Safe to call
// from several threads; the copies of one tile are ordered by the directory's protocol.

#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hit/device.hpp"
#include "hit/runtime/host_rows.hpp"
#include "hit/runtime/tile_directory.hpp"
#include "hit/view.hpp"

namespace hit::runtime {

class DeviceTiles {
 public:
  // The copies at memory `location` of the directory, on `device`. With `asynchronous`, a copy
  // in is started and not waited for: a kernel on the tiles must then follow a fence() made
  // after their copies (the executor makes one per task with ExecuteOptions::fence).
  DeviceTiles(Device& device, Location location, bool asynchronous = false)
      : device_(device), location_(location), asynchronous_(asynchronous) {}
  ~DeviceTiles();
  DeviceTiles(const DeviceTiles&) = delete;
  DeviceTiles& operator=(const DeviceTiles&) = delete;

  // Where tile `t` lives on the host (before any transfer names it).
  void add(TileId t, HostRows host);
  // Takes one of the directory's steps that concerns this device (from or to `location`):
  // copies rows in (waited for unless asynchronous) or out (waited for), or frees a dropped
  // copy. Others are an Error(internal).
  void apply(const Transfer& x);
  // The device copy of `t`, allocated when it has none yet (a tile only written here); the
  // copies dropped since the last allocation are freed first. Call it from the device place's
  // worker, not inside a kernel: freeing waits for the device's streams.
  void* data(TileId t);
  // A view of the device copy over `shape` (array indices), dense rows.
  template <class T>
  View<T> view(TileId t, const Shape& shape) {
    return make_view(static_cast<T*>(data(t)), shape);
  }
  // The work submitted to the device's first stream from now on (execute_on's kernels) waits for
  // the copies started so far, and not for those started after.
  void fence();
  Device& device() noexcept { return device_; }
  Location location() const noexcept { return location_; }

 private:
  struct Copy {
    HostRows host;
    void* device = nullptr;
  };
  Copy& copy(TileId t);
  // The device copy of `t`, which must exist (a copy out of it).
  void* existing(TileId t);
  // Frees the copies dropped so far; returns once every copy dropped before the call is freed.
  void free_dropped();

  Device& device_;
  Location location_;
  bool asynchronous_;
  // Workers of several places call in (a host task's copy out beside a device task's first
  // allocation): the map and the allocations under one lock; the copies themselves outside it.
  std::mutex mutex_;
  std::unordered_map<TileId, Copy> tiles_;
  // Dropped copies, freed by the next allocation: a drop comes from any worker, often while the
  // device computes, and freeing device memory waits for its streams.
  std::vector<std::pair<void*, std::size_t>> dropped_;
  // Held by the worker freeing dropped copies (taken before mutex_, never after).
  std::mutex freeing_;
};

// Runs `body` once on `device`, as a launch with a `single` partition over `domain` runs it:
// block = domain, the device's stream, its threads or BLAS handles in the context. Waits for it.
// `problem_bytes` selects an emulated device's slowdown (the bytes of the tiles it uses).
void execute_on(Device& device, const Box& domain, std::uint64_t problem_bytes,
                const std::function<void(const KernelContext&)>& body);

}  // namespace hit::runtime
