// One package in a slot (engine.hpp): its input rows fetched from their owners (one-sided gets)
// and copied to the device on its second stream, its launch, and its results given back to the
// owners of their rows (one-sided puts).

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/topology/device_params.hpp"
#include "packages/engine.hpp"

namespace hit::detail {

Slot PackageEngine::make_slot(index_t rows) const {
  Slot s;
  Device& dev = device(env_);
  const Shape first = domain_.with_sig(0, Sig(domain_[0].begin(), domain_[0].begin() + rows));
  for (const ArrayPlan& p : plans_) {
    if (p.array.policy == PackagePolicy::replicated_in) continue;
    RowBuffer buf;
    if (p.array.policy == PackagePolicy::reduced_out) {
      buf.bytes.reset(new unsigned char[std::max<std::size_t>(whole_bytes(p), 1)]);
      s.partials.push_back(std::move(buf));
      continue;
    }
    const index_t held_count = held_rows(p, rows);
    const auto bytes = static_cast<std::size_t>(held_count) * p.row_bytes;
    buf.bytes.reset(new unsigned char[std::max<std::size_t>(bytes, 1)]);
    const bool input = p.array.policy == PackagePolicy::partitioned_in;
    const bool local = p.array.policy == PackagePolicy::local;
    if ((input || local) && !dev.uses_host_memory()) {
      // The device copy of the rows (and halo rows), reused by every package this slot holds.
      const Shape held =
          array_rows(p, first.with_sig(0, Sig(first[0].begin(), first[0].begin() + held_count)));
      const Region h{buf.bytes.get(), p.array.element_size, held, dense_steps(held)};
      buf.resident = make_resident(env_, h, h.shape, nullptr);
      if (buf.resident->spilled) {
        throw Error(ErrorKind::out_of_memory,
                    fmt::format("work packages: {} rows of input ({} bytes) do not fit device {}",
                                rows, bytes, dev.label()));
      }
    }
    (local ? s.locals : input ? s.inputs : s.outputs).push_back(std::move(buf));
  }
  return s;
}

// Moves a package's rows of one partitioned array between a slot's buffer and their owners:
// copies for this rank's own rows, one-sided gets (inputs) or puts (outputs) for the others'.
// Returns the bytes moved to or from other ranks.
std::uint64_t PackageEngine::move_rows(bool get, RowBuffer& buf, const Shape& pkg,
                                       const ArrayPlan& p, const RmaWindow& window,
                                       std::vector<MPI_Request>& requests) const {
  std::uint64_t remote = 0;
  for (const Segment& s : p.owners) {
    const index_t lo = std::max(s.begin, pkg[0].begin());
    const index_t hi = std::min(s.end, pkg[0].end());
    if (lo >= hi) continue;
    unsigned char* mine =
        buf.bytes.get() + static_cast<std::size_t>(lo - pkg[0].begin()) * p.row_bytes;
    const std::size_t at = static_cast<std::size_t>(lo - s.begin) * p.row_bytes;
    const std::size_t bytes = static_cast<std::size_t>(hi - lo) * p.row_bytes;
    if (s.rank == env_.rank()) {
      unsigned char* block = static_cast<unsigned char*>(p.array.block.data) + at;
      std::memcpy(get ? mine : block, get ? block : mine, bytes);
    } else {
      rma_bytes(get, mine, bytes, s.rank, at, window.get(), requests);
      remote += bytes;
    }
  }
  return remote;
}

void PackageEngine::fetch(Slot& slot, const Shape& pkg) {
  std::size_t in = 0;
  for (std::size_t a = 0; a < plans_.size(); ++a) {
    const ArrayPlan& p = plans_[a];
    if (p.array.policy != PackagePolicy::partitioned_in) continue;
    RowBuffer& buf = slot.inputs[in++];
    const Shape held = with_halo(p, pkg);
    // On a host device the launch reads this rank's own rows in place.
    if (device(env_).uses_host_memory() && sole_owner(p, held[0]) == env_.rank()) continue;
    fetched_bytes_ += move_rows(true, buf, held, p, *windows_[a], slot.requests);
  }
}

void PackageEngine::prefetch_to_device(Slot& slot, const Shape& pkg) {
  std::size_t in = 0;
  for (const ArrayPlan& p : plans_) {
    if (p.array.policy != PackagePolicy::partitioned_in) continue;
    RowBuffer& buf = slot.inputs[in++];
    if (!buf.resident) continue;
    ResidentState& r = *buf.resident;
    // The same buffer holds another package's rows now: same extents (fewer for the last one),
    // new array indices.
    r.host.shape = array_rows(p, with_halo(p, pkg));
    r.own = r.host.shape;
    r.host_modified = true;
    r.device_modified = false;
    resident_prefetch(r, 1);
  }
  slot.copied_before = launches_;
}

// Where a launch finds a package's rows on the host: in this rank's own block when it holds them
// all, else in the slot's buffer (dense rows).
Region PackageEngine::host_rows(const ArrayPlan& p, const RowBuffer& buf, const Shape& rows) const {
  if (sole_owner(p, rows[0]) == env_.rank()) return p.array.block.select(rows);
  return {buf.bytes.get(), p.array.element_size, rows, dense_steps(rows)};
}

// The launch argument of one array for a package; `in` and `out` count the slot's buffers used.
LaunchArg PackageEngine::launch_arg(const ArrayPlan& p, Slot& slot, const Shape& pkg,
                                    std::size_t& in, std::size_t& out, std::size_t& reduced,
                                    std::size_t& local) const {
  LaunchArg a;
  a.reads = p.array.reads;
  switch (p.array.policy) {
    case PackagePolicy::replicated_in:
      a.intent = Intent::in;
      a.host = p.array.block;
      a.own = p.array.block.shape;
      a.resident = p.resident;
      break;
    case PackagePolicy::partitioned_in: {
      a.intent = Intent::in;
      RowBuffer& buf = slot.inputs[in++];
      if (buf.resident) {
        a.host = buf.resident->host;
        a.resident = buf.resident;
      } else {
        a.host = host_rows(p, buf, array_rows(p, with_halo(p, pkg)));
      }
      a.own = array_rows(p, pkg);
      break;
    }
    case PackagePolicy::reduced_out: {
      a.intent = Intent::out;
      RowBuffer& buf = slot.partials[reduced++];
      const Shape& whole = p.array.block.shape;
      a.host = {buf.bytes.get(), p.array.element_size, whole, dense_steps(whole)};
      a.own = whole;
      a.copied_back_whole = true;
      if (device(env_).uses_host_memory()) std::memset(a.host.data, 0, whole_bytes(p));
      break;
    }
    case PackagePolicy::local: {
      // Written by one step and read by later ones on this device: the slot's device copy, its
      // extents relabelled to this package's rows (nothing on the host to send, nothing newer on
      // the device to bring back yet).
      a.intent = Intent::out;
      RowBuffer& buf = slot.locals[local++];
      const Shape rows = array_rows(p, pkg);
      if (buf.resident) {
        ResidentState& r = *buf.resident;
        r.host.shape = rows;
        r.own = rows;
        r.host_modified = false;
        r.device_modified = false;
        a.host = r.host;
        a.resident = buf.resident;
      } else {
        a.host = {buf.bytes.get(), p.array.element_size, rows, dense_steps(rows)};
      }
      a.own = rows;
      break;
    }
    case PackagePolicy::partitioned_out: {
      a.intent = Intent::out;
      RowBuffer& buf = slot.outputs[out++];
      const Shape rows = array_rows(p, pkg);
      a.host = host_rows(p, buf, rows);
      a.own = rows;
      // An output starts zero-filled, as a launch's OUT tile does on an accelerator.
      if (device(env_).uses_host_memory()) {
        std::memset(a.host.data, 0, static_cast<std::size_t>(pkg[0].size()) * p.row_bytes);
      }
      break;
    }
  }
  return a;
}

LaunchRecord PackageEngine::launch(Slot& slot, const Shape& pkg, const KernelCall& call) {
  Device& dev = device(env_);
  // A device copy issued after the last launch began may still be running; one issued before it
  // ran beside it (the launch ended by synchronising every stream).
  const bool on_device = std::any_of(slot.inputs.begin(), slot.inputs.end(),
                                     [](const RowBuffer& b) { return b.resident != nullptr; });
  if (on_device && slot.copied_before == launches_) dev.synchronize(1);
  if (on_device && slot.copied_before < launches_) ++overlapped_;
  std::vector<LaunchArg> args;
  std::size_t in = 0;
  std::size_t out = 0;
  std::size_t reduced = 0;
  std::size_t local = 0;
  for (const ArrayPlan& p : plans_)
    args.push_back(launch_arg(p, slot, pkg, in, out, reduced, local));
  // The same plug-in and parameters as the domain's partition, over the package's rows.
  const Partition part = partition(partition_.spec(), pkg, {.access = call.access});
  ++launches_;
  return call.launch_one(part, std::move(args));
}

void PackageEngine::give_back(Slot& slot, const Shape& pkg) {
  std::size_t out = 0;
  std::size_t reduced = 0;
  for (std::size_t a = 0; a < plans_.size(); ++a) {
    const ArrayPlan& p = plans_[a];
    if (p.array.policy == PackagePolicy::reduced_out) {
      p.array.add(sums_[a].data(), slot.partials[reduced++].bytes.get(),
                  static_cast<std::size_t>(p.array.block.shape.size()));
      continue;
    }
    if (p.array.policy != PackagePolicy::partitioned_out) continue;
    RowBuffer& buf = slot.outputs[out++];
    if (sole_owner(p, pkg[0]) == env_.rank()) continue;  // written in place by the launch
    returned_bytes_ += move_rows(false, buf, pkg, p, *windows_[a], slot.requests);
  }
}

void PackageEngine::fail(const Error& e) {
  failed_ = true;
  failure_ = e.what();
}

}  // namespace hit::detail
