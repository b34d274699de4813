#pragma once
// Where each tile's valid copies are: the host's memory and each device's, under a coherence
// protocol with an owner (MOSI with the host as home memory; docs/runtime.md has a worked example).
// The directory only keeps the books: acquire() says which copies to make, in order, and the
// caller makes them before its task runs, so one protocol serves emulated and CUDA devices alike.
//
// Per tile and device memory, a copy is
//   invalid  — absent or stale;
//   shared   — valid, and the host's copy is valid too (it may be dropped at no cost);
//   owned    — valid and newer than the host's, other devices may share it: it is written back
//              before it is dropped;
//   modified — the only valid copy (written here): written back before it is dropped.
// The host's copy is valid or not. A tile is copied to a memory once per need, not once per task,
// and goes back to the host only when the host needs it (a host task, flush) or its last dirty
// copy is evicted. Device memories evict least recently used tiles not in use, within capacity.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hit/runtime/access.hpp"

namespace hit::runtime {

// A memory: 0 is the host's, 1..devices a device's.
using Location = int;
constexpr Location host_memory = 0;

enum class CopyState : unsigned char { invalid, shared, owned, modified };

enum class TransferKind : unsigned char {
  copy,        // the tile's contents from `from` to `to`
  write_back,  // the same, of a dirty copy evicted from `from` to the host
  drop,        // the copy at device memory `from` is no longer valid (evicted, or stale after a
               // write elsewhere): its memory may be freed; nothing moves, and `to` is `from`
};

// One step to take before the task that acquired runs, in the order listed.
struct Transfer {
  TileId tile = 0;
  Location from = host_memory;
  Location to = host_memory;
  std::size_t bytes = 0;
  TransferKind kind = TransferKind::copy;
};

struct TransferCounters {
  std::uint64_t to_device_bytes = 0;  // host -> device
  std::uint64_t to_host_bytes = 0;    // device -> host (write-backs included)
  std::uint64_t between_devices_bytes = 0;
  std::uint64_t evictions = 0;    // copies dropped to make room
  std::uint64_t write_backs = 0;  // evictions of dirty copies, each one copy to the host
};

class TileDirectory {
 public:
  // `capacity_bytes[d - 1]` is device d's memory for tiles.
  explicit TileDirectory(std::vector<std::size_t> capacity_bytes);

  // A tile of `bytes` bytes, valid on the host only (as read or generated there).
  TileId add(std::size_t bytes);

  // Makes the tile's copy at `where` usable for `mode` and holds it there (it is not evicted)
  // until release(). Returns the steps to take first: evictions (write-backs and drops), then the
  // tile's own copy (none for a write alone), then, for a write, the drops of every other device
  // copy (stale now; the host's is invalid too). Error(out_of_memory)
  // when the tile does not fit beside the tiles held at `where`.
  std::vector<Transfer> acquire(TileId tile, Location where, Access mode);
  void release(TileId tile, Location where);

  // The copies that make the host's copy of `tile` (of every tile) valid: the end of a run, or
  // before code outside the runtime reads it. Device copies stay, as shared.
  std::vector<Transfer> flush(TileId tile);
  std::vector<Transfer> flush_all();

  CopyState state(TileId tile, Location where) const;  // on the host: shared or invalid
  bool host_valid(TileId tile) const { return state(tile, host_memory) != CopyState::invalid; }
  std::size_t bytes(TileId tile) const;
  std::size_t used_bytes(Location device) const;
  // The bytes of the tiles held on `device` (acquired and not released): what eviction cannot free.
  std::size_t held_bytes(Location device) const;
  std::size_t capacity_bytes(Location device) const;
  int devices() const noexcept { return static_cast<int>(capacity_.size()); }
  std::size_t size() const noexcept { return tiles_.size(); }
  const TransferCounters& counters() const noexcept { return counters_; }

 private:
  struct Tile {
    std::size_t bytes = 0;
    bool host_valid = true;
    std::vector<CopyState> copies;    // per device
    std::vector<std::uint64_t> used;  // per device: the clock of its last acquire (LRU)
    std::vector<int> holds;           // per device: acquires not yet released
  };
  Tile& tile(TileId t);
  const Tile& tile(TileId t) const;
  void check_location(Location where, const char* what) const;
  // The copy of `t` into `where` from the best valid source.
  Transfer copy_in(TileId t, Location where);
  // Room for `bytes` more on `device`: drops least recently used copies not held.
  void make_room(Location device, std::size_t bytes, std::vector<Transfer>& out);
  void drop(TileId t, Location device, std::vector<Transfer>& out);
  void count(const Transfer& x);

  std::vector<std::size_t> capacity_;
  std::vector<std::size_t> used_;
  std::vector<std::size_t> held_;
  std::vector<Tile> tiles_;
  std::uint64_t clock_ = 0;
  TransferCounters counters_;
};

}  // namespace hit::runtime
