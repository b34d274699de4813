#include "hit/runtime/tile_directory.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "hit/core/error.hpp"

namespace hit::runtime {

namespace {

bool dirty(CopyState s) {
  return s == CopyState::owned || s == CopyState::modified;
}

}  // namespace

TileDirectory::TileDirectory(std::vector<std::size_t> capacity_bytes)
    : capacity_(std::move(capacity_bytes)),
      used_(capacity_.size(), 0),
      held_(capacity_.size(), 0) {}

TileId TileDirectory::add(std::size_t bytes) {
  Tile t;
  t.bytes = bytes;
  t.copies.assign(capacity_.size(), CopyState::invalid);
  t.used.assign(capacity_.size(), 0);
  t.holds.assign(capacity_.size(), 0);
  tiles_.push_back(std::move(t));
  return static_cast<TileId>(tiles_.size() - 1);
}

TileDirectory::Tile& TileDirectory::tile(TileId t) {
  return const_cast<Tile&>(std::as_const(*this).tile(t));
}

const TileDirectory::Tile& TileDirectory::tile(TileId t) const {
  if (t < 0 || static_cast<std::size_t>(t) >= tiles_.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("tile directory: no tile {} (it has {})", t, tiles_.size()));
  }
  return tiles_[static_cast<std::size_t>(t)];
}

void TileDirectory::check_location(Location where, const char* what) const {
  if (where < 0 || where > devices()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("tile directory: {} at memory {}, which does not exist (0 is the "
                            "host's, 1 to {} the devices')",
                            what, where, devices()));
  }
}

CopyState TileDirectory::state(TileId t, Location where) const {
  check_location(where, "state");
  const Tile& x = tile(t);
  if (where == host_memory) return x.host_valid ? CopyState::shared : CopyState::invalid;
  return x.copies[static_cast<std::size_t>(where - 1)];
}

std::size_t TileDirectory::bytes(TileId t) const {
  return tile(t).bytes;
}

std::size_t TileDirectory::used_bytes(Location device) const {
  check_location(device, "used bytes");
  return device == host_memory ? 0 : used_[static_cast<std::size_t>(device - 1)];
}

std::size_t TileDirectory::held_bytes(Location device) const {
  check_location(device, "held bytes");
  return device == host_memory ? 0 : held_[static_cast<std::size_t>(device - 1)];
}

std::size_t TileDirectory::capacity_bytes(Location device) const {
  check_location(device, "capacity");
  return device == host_memory ? 0 : capacity_[static_cast<std::size_t>(device - 1)];
}

void TileDirectory::count(const Transfer& x) {
  if (x.from == host_memory) {
    counters_.to_device_bytes += x.bytes;
  } else if (x.to == host_memory) {
    counters_.to_host_bytes += x.bytes;
  } else {
    counters_.between_devices_bytes += x.bytes;
  }
}

Transfer TileDirectory::copy_in(TileId t, Location where) {
  Tile& x = tile(t);
  Transfer out{t, host_memory, where, x.bytes, TransferKind::copy};
  if (!x.host_valid) {
    // The only source is the dirty copy; it stays responsible for the write-back (owned), and the
    // new copy shares it.
    const auto owner = std::find_if(x.copies.begin(), x.copies.end(), dirty);
    if (owner == x.copies.end()) {
      throw Error(ErrorKind::internal,
                  fmt::format("tile directory: tile {} has no valid copy anywhere", t));
    }
    out.from = static_cast<Location>(owner - x.copies.begin()) + 1;
    if (where == host_memory) {
      *owner = CopyState::shared;  // the host is as new now: nothing left to write back
      x.host_valid = true;
    } else {
      *owner = CopyState::owned;
    }
  } else if (where == host_memory) {
    throw Error(ErrorKind::internal, "tile directory: a copy to the host, whose copy is valid");
  }
  if (where != host_memory) x.copies[static_cast<std::size_t>(where - 1)] = CopyState::shared;
  count(out);
  return out;
}

void TileDirectory::drop(TileId t, Location device, std::vector<Transfer>& out) {
  Tile& x = tile(t);
  auto& copy = x.copies[static_cast<std::size_t>(device - 1)];
  if (dirty(copy)) {
    // The newest contents leave the device: the host takes them (the other copies, if any, were
    // sharing this one and are as new as the host now).
    const Transfer back{t, device, host_memory, x.bytes, TransferKind::write_back};
    count(back);
    out.push_back(back);
    ++counters_.write_backs;
    x.host_valid = true;
  }
  out.push_back({t, device, device, x.bytes, TransferKind::drop});
  copy = CopyState::invalid;
  used_[static_cast<std::size_t>(device - 1)] -= x.bytes;
}

void TileDirectory::make_room(Location device, std::size_t bytes, std::vector<Transfer>& out) {
  const auto d = static_cast<std::size_t>(device - 1);
  const auto fail = [&](std::size_t held) {
    return Error(ErrorKind::out_of_memory,
                 fmt::format("tile directory: a tile of {} bytes does not fit on device memory "
                             "{} ({} bytes, {} of them held by tiles in use)",
                             bytes, device, capacity_[d], held));
  };
  if (bytes > capacity_[d]) throw fail(0);
  while (used_[d] + bytes > capacity_[d]) {
    TileId victim = -1;
    std::size_t held = 0;
    for (std::size_t i = 0; i < tiles_.size(); ++i) {
      const Tile& x = tiles_[i];
      if (x.copies[d] == CopyState::invalid) continue;
      if (x.holds[d] > 0) {
        held += x.bytes;
        continue;
      }
      if (victim < 0 || x.used[d] < tiles_[static_cast<std::size_t>(victim)].used[d]) {
        victim = static_cast<TileId>(i);
      }
    }
    if (victim < 0) throw fail(held);
    drop(victim, device, out);
    ++counters_.evictions;
  }
}

std::vector<Transfer> TileDirectory::acquire(TileId t, Location where, Access mode) {
  check_location(where, "acquire");
  Tile& x = tile(t);
  std::vector<Transfer> out;
  if (where == host_memory) {
    if (reads(mode) && !x.host_valid) out.push_back(copy_in(t, host_memory));
  } else {
    const auto d = static_cast<std::size_t>(where - 1);
    if (x.copies[d] == CopyState::invalid) {
      make_room(where, x.bytes, out);
      used_[d] += x.bytes;
      if (reads(mode)) {
        out.push_back(copy_in(t, where));
      } else {
        x.copies[d] = CopyState::shared;  // replaced at once below: a write needs no old contents
      }
    }
    x.used[d] = ++clock_;
    if (x.holds[d]++ == 0) held_[d] += x.bytes;
  }
  if (writes(mode)) {
    // Every other copy is stale now; stale device copies free their memory.
    for (std::size_t i = 0; i < x.copies.size(); ++i) {
      const Location other = static_cast<Location>(i) + 1;
      if (other == where || x.copies[i] == CopyState::invalid) continue;
      x.copies[i] = CopyState::invalid;
      used_[i] -= x.bytes;
      out.push_back({t, other, other, x.bytes, TransferKind::drop});
    }
    x.host_valid = where == host_memory;
    if (where != host_memory) x.copies[static_cast<std::size_t>(where - 1)] = CopyState::modified;
  }
  return out;
}

void TileDirectory::release(TileId t, Location where) {
  check_location(where, "release");
  if (where == host_memory) return;
  int& holds = tile(t).holds[static_cast<std::size_t>(where - 1)];
  if (holds <= 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("tile directory: release of tile {} on device memory {}, which holds "
                            "no acquire of it",
                            t, where));
  }
  if (--holds == 0) held_[static_cast<std::size_t>(where - 1)] -= tile(t).bytes;
}

std::vector<Transfer> TileDirectory::flush(TileId t) {
  std::vector<Transfer> out;
  if (!tile(t).host_valid) out.push_back(copy_in(t, host_memory));
  return out;
}

std::vector<Transfer> TileDirectory::flush_all() {
  std::vector<Transfer> out;
  for (std::size_t i = 0; i < tiles_.size(); ++i) {
    if (!tiles_[i].host_valid) out.push_back(copy_in(static_cast<TileId>(i), host_memory));
  }
  return out;
}

}  // namespace hit::runtime
