// The work-package runtime (hit/work_packages.hpp, docs/packages.md): equal packages of rows,
// dispatched on demand through one queue per rank (a counter in an MPI window that its owner and
// thieves advance with atomic fetch-and-add), prefetched `depth` ahead, and dispatched again when a
// device fails.

#include "hit/work_packages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/spec.hpp"
#include "hit/core/timer.hpp"
#include "hit/device.hpp"
#include "hit/device_params.hpp"
#include "hit/partition.hpp"
#include "hit/physical_topology.hpp"
#include "packages/rma_window.hpp"

namespace hit {

// ---- options -----------------------------------------------------------------------------------

namespace {

const std::vector<ParamInfo>& package_params() {
  static const std::vector<ParamInfo> params = {
      {"size", "rows of the domain's first axis per package, or auto (tuned by a measurement)",
       "auto"},
      {"depth", "packages each rank holds ahead of the one computing (prefetched), >= 1", "2"},
  };
  return params;
}

}  // namespace

PackageOptions PackageOptions::parse(std::string_view text) {
  const Spec spec = Spec::parse(text);
  if (spec.name() != "workPackages") {
    throw Error(ErrorKind::plugin, fmt::format("'{}' is not a work-package spec: expected "
                                               "workPackages[:size=G|auto][,depth=D]",
                                               excerpt(text)));
  }
  spec.check_keys(package_params());
  PackageOptions o;
  const std::string size = spec.get_string("size", "auto");
  if (size != "auto") {
    o.size = spec.get_int("size", 0);
    if (o.size <= 0) {
      throw Error(
          ErrorKind::invalid_argument,
          fmt::format("work packages: size={} is not a positive number of rows (or auto)", size));
    }
  }
  const std::int64_t depth = spec.get_int("depth", 2);
  if (depth < 1 || depth > 1024) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: depth={} is outside 1..1024 (packages held ahead "
                            "of the one computing)",
                            depth));
  }
  o.depth = static_cast<int>(depth);
  return o;
}

std::string PackageOptions::spec() const {
  return fmt::format("workPackages:size={},depth={}", size > 0 ? std::to_string(size) : "auto",
                     depth);
}

namespace detail {

namespace {

// Where the rows of a partitioned array live: one segment per rank holding some, by rows.
struct Segment {
  index_t begin = 0;  // rows [begin, end) of the array's first axis
  index_t end = 0;
  int rank = 0;
};

// A partitioned or replicated array of one run, with what the other ranks hold of it.
struct ArrayPlan {
  PackageArray array;
  std::size_t row_bytes = 0;  // bytes of one row (all axes after the first)
  std::vector<Sig> row_axes;  // the axes after the first (rank 1 arrays: none)
  std::vector<Segment> owners;
  std::shared_ptr<ResidentState> resident;  // replicated inputs on an accelerator
};

// Host memory of one package's rows of one array.
struct RowBuffer {
  std::unique_ptr<unsigned char[]> bytes;
  std::shared_ptr<ResidentState> resident;  // its device copy (inputs on an accelerator)
};

// A package held by this rank: claimed, its inputs arriving, ready, or its results returning.
struct Slot {
  enum class State { free, claiming, fetching, ready, returning };
  State state = State::free;
  index_t id = -1;
  bool rerouted = false;
  std::uint64_t sequence = 0;       // claim order: packages launch in it
  std::uint64_t copied_before = 0;  // launches done when its device copy was issued
  std::vector<MPI_Request> requests;
  std::vector<RowBuffer> inputs;   // one per partitioned input
  std::vector<RowBuffer> outputs;  // one per partitioned output
};

// Lets MPI make progress on operations other ranks target at this one (a few polls: a remote
// accumulate is a message in and a reply out).
void poke_progress(MPI_Comm comm) {
  for (int i = 0; i < 4; ++i) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  }
}

bool any_pending(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return false;
  int done = 0;
  check_mpi(
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
      "MPI_Testall");
  if (done == 0) return true;
  requests.clear();
  return false;
}

}  // namespace

class PackageEngine {
 public:
  PackageEngine(Environment& env, Shape domain, PackageOptions options, std::string partition,
                std::string label)
      : env_(env),
        domain_(std::move(domain)),
        options_(options),
        partition_(std::move(partition)),
        label_(std::move(label)) {
    if (domain_.is_null() || domain_.empty()) {
      throw Error(ErrorKind::invalid_argument, "work packages: the domain is empty");
    }
    if (domain_[0].stride() != 1) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: the domain's first axis {} must have stride 1",
                              domain_.str()));
    }
    rows_ = domain_.extent(0);
    if (options_.size > rows_) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: size={} is larger than the domain's {} rows ({})",
                              options_.size, rows_, domain_.str()));
    }
    size_ = options_.size;
  }

  const Shape& domain() const noexcept { return domain_; }
  index_t size() const noexcept { return size_; }
  index_t count() const noexcept { return size_ == 0 ? 0 : (rows_ + size_ - 1) / size_; }
  Shape package(index_t id) const {
    if (size_ == 0 || id < 0 || id >= count()) {
      throw Error(
          ErrorKind::invalid_argument,
          fmt::format("work packages: package {} does not exist ({} packages)", id, count()));
    }
    const index_t first = domain_[0].begin() + id * size_;
    return domain_.with_sig(0, Sig(first, std::min(first + size_, domain_[0].end())));
  }
  double overhead_s() const noexcept { return overhead_s_; }
  double row_s() const noexcept { return row_s_; }
  bool failed() const noexcept { return failed_; }

  PackageReport run(const std::string& kernel, const AccessPattern& access,
                    std::vector<PackageArray> arrays, const PackageLaunch& launch_one);

 private:
  // ---- kept between runs of the same arrays
  // -------------------------------------------------------
  static std::string signature(const std::vector<PackageArray>& arrays);
  static std::vector<PackageArray> arrays_of(const std::vector<ArrayPlan>& plans);
  void prepare(std::vector<PackageArray> arrays);
  void reset_queue();

  // ---- set-up -----------------------------------------------------------------------------------
  std::vector<ArrayPlan> plan_arrays(std::vector<PackageArray> arrays) const;
  void tune(std::vector<ArrayPlan>& plans, const AccessPattern& access,
            const PackageLaunch& launch_one, const std::vector<RmaWindow*>& windows);
  int usable_depth(const std::vector<ArrayPlan>& plans) const;
  std::vector<index_t> home_ranges(const std::vector<ArrayPlan>& plans) const;

  // ---- one package
  // --------------------------------------------------------------------------------
  Slot make_slot(const std::vector<ArrayPlan>& plans, index_t rows) const;
  void fetch(Slot& slot, const Shape& pkg, const std::vector<ArrayPlan>& plans,
             const std::vector<RmaWindow*>& windows);
  void prefetch_to_device(Slot& slot, const Shape& pkg, const std::vector<ArrayPlan>& plans);
  LaunchRecord launch(Slot& slot, const Shape& pkg, const std::vector<ArrayPlan>& plans,
                      const AccessPattern& access, const PackageLaunch& launch_one);
  void give_back(Slot& slot, const Shape& pkg, const std::vector<ArrayPlan>& plans,
                 const std::vector<RmaWindow*>& windows);
  std::uint64_t move_rows(bool get, RowBuffer& buf, const Shape& pkg, const ArrayPlan& p,
                          const RmaWindow& window, std::vector<MPI_Request>& requests) const;

  // ---- a round of dispatch
  // -------------------------------------------------------------------------
  void dispatch(const std::vector<index_t>& ids, const std::vector<index_t>& ranges, bool rerouted,
                std::vector<ArrayPlan>& plans, const AccessPattern& access,
                const PackageLaunch& launch_one, const std::vector<RmaWindow*>& windows,
                RmaWindow& queue, double t0, PackageReport& report);

  // Rows [a, b) of a dense row region starting at row `first`.
  static HostRegion rows_of(const HostRegion& whole, index_t first, const Shape& rows) {
    HostRegion r = whole;
    r.shape = rows;
    r.data = static_cast<unsigned char*>(whole.data) +
             (rows[0].begin() - first) * whole.steps[0] * static_cast<index_t>(whole.element_size);
    return r;
  }
  static std::array<index_t, max_rank> dense_row_steps(const ArrayPlan&, const Shape& rows) {
    std::array<index_t, max_rank> steps{};
    index_t step = 1;
    for (int k = rows.rank() - 1; k >= 0; --k) {
      steps[static_cast<std::size_t>(k)] = step;
      step *= rows.extent(k);
    }
    return steps;
  }
  Shape array_rows(const ArrayPlan& plan, const Shape& pkg) const {
    const auto later = static_cast<int>(plan.row_axes.size());
    Shape s = Shape::of_rank(later + 1).with_sig(0, pkg[0]);
    for (int k = 0; k < later; ++k)
      s = s.with_sig(k + 1, plan.row_axes[static_cast<std::size_t>(k)]);
    return s;
  }
  // Where a launch finds a package's rows on the host: in this rank's own block when it holds them
  // all, else in the slot's buffer (dense rows).
  HostRegion host_rows(const ArrayPlan& p, const RowBuffer& buf, const Shape& rows) const {
    if (sole_owner(p, rows[0]) == env_.rank())
      return rows_of(p.array.block, p.array.block.shape[0].begin(), rows);
    HostRegion h;
    h.data = buf.bytes.get();
    h.element_size = p.array.element_size;
    h.shape = rows;
    h.steps = dense_row_steps(p, rows);
    return h;
  }
  // The owner holding all of rows `r` of `plan`, or -1 when they are spread.
  static int sole_owner(const ArrayPlan& plan, const Sig& r) {
    for (const Segment& s : plan.owners) {
      if (s.begin <= r.begin() && r.end() <= s.end) return s.rank;
    }
    return -1;
  }

  Environment& env_;
  Shape domain_;
  PackageOptions options_;
  std::string partition_;
  std::string label_;
  index_t rows_ = 0;
  index_t size_ = 0;
  int depth_ = -1;  // -1: not yet found for the current arrays
  double overhead_s_ = 0;
  double row_s_ = 0;
  bool failed_ = false;
  std::string failure_;
  std::uint64_t launches_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t fetched_bytes_ = 0;
  std::uint64_t returned_bytes_ = 0;
  std::uint64_t overlapped_ = 0;
  std::vector<ArrayPlan> plans_;
  std::string signature_;
  std::vector<std::unique_ptr<RmaWindow>> owned_windows_;
  std::vector<RmaWindow*> windows_;
  std::unique_ptr<RmaWindow> queue_;
};

std::vector<ArrayPlan> PackageEngine::plan_arrays(std::vector<PackageArray> arrays) const {
  const int me = env_.rank();
  const int procs = env_.size();
  std::vector<ArrayPlan> plans;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    ArrayPlan p;
    p.array = arrays[i];
    const HostRegion& b = p.array.block;
    const bool partitioned = p.array.policy != PackagePolicy::replicated_in;
    // What each rank holds: rank, first row, rows, and the row shape (begin/end per later axis).
    constexpr int fields = 2 + 2 * (max_rank - 1) + 1;
    std::vector<std::int64_t> mine(fields, 0);
    bool ok = true;
    std::string why;
    if (!b.shape.is_null()) {
      const int r = b.shape.rank();
      if (b.shape[0].stride() != 1 || b.steps[static_cast<std::size_t>(r - 1)] != 1) {
        ok = false;
        why = "its rows must have unit stride and its last axis must be contiguous";
      }
      index_t dense = 1;
      for (int k = r - 1; k >= 1 && ok; --k) {
        if (b.steps[static_cast<std::size_t>(k)] != dense || b.shape[k].stride() != 1) {
          ok = false;
          why = "it must be a dense tile (no padding or ghost cells, unit strides)";
        }
        dense *= b.shape.extent(k);
      }
      if (ok && r >= 2 && b.steps[0] != dense) {
        ok = false;
        why = "it must be a dense tile (no padding or ghost cells, unit strides)";
      }
      mine[0] = b.shape[0].begin();
      mine[1] = b.shape[0].end();
      for (int k = 1; k < r; ++k) {
        mine[static_cast<std::size_t>(2 * k)] = b.shape[k].begin();
        mine[static_cast<std::size_t>(2 * k + 1)] = b.shape[k].end();
      }
      mine[fields - 1] = r;
    }
    collectively(env_.comm(), [&] {
      if (!ok) {
        throw Error(
            ErrorKind::invalid_argument,
            fmt::format("work packages: array {} ({}) cannot be used: {}", i, b.shape.str(), why));
      }
    });
    std::vector<std::int64_t> all(static_cast<std::size_t>(fields * procs));
    allgather(mine.data(), fields, MPI_INT64_T, all.data(), env_.comm());
    // Every rank holding rows must agree on the rest of the shape and the rank.
    int rank = 0;
    const std::int64_t* ref = nullptr;
    for (int r = 0; r < procs; ++r) {
      const std::int64_t* v = all.data() + static_cast<std::ptrdiff_t>(r) * fields;
      if (v[fields - 1] == 0) continue;
      if (ref == nullptr) {
        ref = v;
        rank = static_cast<int>(v[fields - 1]);
      }
      bool same = v[fields - 1] == rank;
      for (int f = 2; f < fields - 1 && same; ++f) same = v[f] == ref[f];
      if (!same) {
        throw Error(ErrorKind::shape,
                    fmt::format("work packages: array {} is not laid out by whole rows: ranks "
                                "hold blocks of different columns or ranks",
                                i));
      }
      if (partitioned && v[1] > v[0]) p.owners.push_back({v[0], v[1], r});
    }
    if (ref == nullptr) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: array {} is null on every rank", i));
    }
    index_t row_elems = 1;
    for (int k = 1; k < rank; ++k) {
      p.row_axes.emplace_back(ref[static_cast<std::size_t>(2 * k)],
                              ref[static_cast<std::size_t>(2 * k + 1)]);
      row_elems = checked_mul(row_elems, p.row_axes.back().size(), "row size");
    }
    p.row_bytes = static_cast<std::size_t>(
        checked_mul(row_elems, static_cast<index_t>(p.array.element_size), "row bytes"));
    if (partitioned) {
      std::sort(p.owners.begin(), p.owners.end(),
                [](const Segment& x, const Segment& y) { return x.begin < y.begin; });
      // The blocks must cover the domain's rows exactly once.
      index_t at = domain_[0].begin();
      bool covers = true;
      for (const Segment& s : p.owners) {
        if (s.begin > at || s.end <= at) {
          covers = s.begin <= at && s.end > at;
          if (!covers) break;
        }
        if (s.begin != at) {
          covers = false;
          break;
        }
        at = s.end;
      }
      if (!covers || at < domain_[0].end()) {
        throw Error(ErrorKind::shape,
                    fmt::format("work packages: the blocks of partitioned array {} do not cover "
                                "rows {} of the domain exactly once",
                                i, domain_[0].str()));
      }
    } else if (b.shape.is_null()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: replicated input {} is null on rank {}", i, me));
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

Slot PackageEngine::make_slot(const std::vector<ArrayPlan>& plans, index_t rows) const {
  Slot s;
  Device& dev = device(env_);
  const Shape first = domain_.with_sig(0, Sig(domain_[0].begin(), domain_[0].begin() + rows));
  for (const ArrayPlan& p : plans) {
    if (p.array.policy == PackagePolicy::replicated_in) continue;
    RowBuffer buf;
    const auto bytes = static_cast<std::size_t>(rows) * p.row_bytes;
    buf.bytes.reset(new unsigned char[std::max<std::size_t>(bytes, 1)]);
    const bool input = p.array.policy == PackagePolicy::partitioned_in;
    if (input && !dev.uses_host_memory()) {
      // The device copy of the rows, reused by every package this slot holds.
      HostRegion h;
      h.data = buf.bytes.get();
      h.element_size = p.array.element_size;
      h.shape = array_rows(p, first);
      h.steps = dense_row_steps(p, h.shape);
      buf.resident = make_resident(env_, h, h.shape, nullptr);
      if (buf.resident->spilled) {
        throw Error(ErrorKind::out_of_memory,
                    fmt::format("work packages: {} rows of input ({} bytes) do not fit device {}",
                                rows, bytes, dev.label()));
      }
    }
    (input ? s.inputs : s.outputs).push_back(std::move(buf));
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

// Starts the transfers of a package's input rows into the slot.
void PackageEngine::fetch(Slot& slot, const Shape& pkg, const std::vector<ArrayPlan>& plans,
                          const std::vector<RmaWindow*>& windows) {
  std::size_t in = 0;
  for (std::size_t a = 0; a < plans.size(); ++a) {
    const ArrayPlan& p = plans[a];
    if (p.array.policy != PackagePolicy::partitioned_in) continue;
    RowBuffer& buf = slot.inputs[in++];
    // On a host device the launch reads this rank's own rows in place.
    if (device(env_).uses_host_memory() && sole_owner(p, pkg[0]) == env_.rank()) continue;
    fetched_bytes_ += move_rows(true, buf, pkg, p, *windows[a], slot.requests);
  }
}

void PackageEngine::prefetch_to_device(Slot& slot, const Shape& pkg,
                                       const std::vector<ArrayPlan>& plans) {
  std::size_t in = 0;
  for (const ArrayPlan& p : plans) {
    if (p.array.policy != PackagePolicy::partitioned_in) continue;
    RowBuffer& buf = slot.inputs[in++];
    if (!buf.resident) continue;
    ResidentState& r = *buf.resident;
    // The same buffer holds another package's rows now: same extents (fewer for the last one),
    // new array indices.
    r.host.shape = array_rows(p, pkg);
    r.own = r.host.shape;
    r.host_modified = true;
    r.device_modified = false;
    resident_prefetch(r, 1);
  }
  slot.copied_before = launches_;
}

LaunchRecord PackageEngine::launch(Slot& slot, const Shape& pkg,
                                   const std::vector<ArrayPlan>& plans, const AccessPattern& access,
                                   const PackageLaunch& launch_one) {
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
  for (const ArrayPlan& p : plans) {
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
        const Shape rows = array_rows(p, pkg);
        if (buf.resident) {
          a.host = buf.resident->host;
          a.resident = buf.resident;
        } else {
          a.host = host_rows(p, buf, rows);
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
        if (dev.uses_host_memory()) {
          std::memset(a.host.data, 0, static_cast<std::size_t>(pkg[0].size()) * p.row_bytes);
        }
        break;
      }
    }
    args.push_back(std::move(a));
  }
  const Partition part = partition(partition_, pkg, {.access = access, .label = label_});
  ++launches_;
  return launch_one(part, std::move(args));
}

// Sends a package's results to the owners of their rows (nothing when they are this rank's).
void PackageEngine::give_back(Slot& slot, const Shape& pkg, const std::vector<ArrayPlan>& plans,
                              const std::vector<RmaWindow*>& windows) {
  std::size_t out = 0;
  for (std::size_t a = 0; a < plans.size(); ++a) {
    const ArrayPlan& p = plans[a];
    if (p.array.policy != PackagePolicy::partitioned_out) continue;
    RowBuffer& buf = slot.outputs[out++];
    if (sole_owner(p, pkg[0]) == env_.rank()) continue;  // written in place by the launch
    returned_bytes_ += move_rows(false, buf, pkg, p, *windows[a], slot.requests);
  }
}

std::vector<index_t> PackageEngine::home_ranges(const std::vector<ArrayPlan>& plans) const {
  const int procs = env_.size();
  std::vector<index_t> ranges(static_cast<std::size_t>(2 * procs), 0);
  const ArrayPlan* home = nullptr;
  for (const ArrayPlan& p : plans) {
    if (p.array.policy == PackagePolicy::partitioned_out) {
      home = &p;
      break;
    }
  }
  for (const ArrayPlan& p : plans) {
    if (home == nullptr && p.array.policy == PackagePolicy::partitioned_in) home = &p;
  }
  const index_t n = count();
  if (home == nullptr) {
    // Nothing is laid out: the packages in blocks over the ranks.
    for (int r = 0; r < procs; ++r) {
      ranges[static_cast<std::size_t>(2 * r)] = n * r / procs;
      ranges[static_cast<std::size_t>(2 * r + 1)] = n * (r + 1) / procs;
    }
    return ranges;
  }
  // A package's home is the owner of its first row: a contiguous run of packages per block.
  const index_t d0 = domain_[0].begin();
  for (const Segment& seg : home->owners) {
    const index_t lo = (seg.begin - d0 + size_ - 1) / size_;
    const index_t hi = (seg.end - d0 + size_ - 1) / size_;
    ranges[static_cast<std::size_t>(2 * seg.rank)] = std::min(lo, n);
    ranges[static_cast<std::size_t>(2 * seg.rank + 1)] = std::min(hi, n);
  }
  return ranges;
}

int PackageEngine::usable_depth(const std::vector<ArrayPlan>& plans) const {
  Device& dev = device(env_);
  if (dev.uses_host_memory() || failed_) return options_.depth;
  // Device bytes of one package: its input rows (a slot's device copy) and its output rows
  // (staged by the launch). Rows are padded on the device: count a cache line per row.
  std::uint64_t in = 0;
  std::uint64_t out = 0;
  const auto rows = static_cast<std::uint64_t>(size_);
  for (const ArrayPlan& p : plans) {
    const std::uint64_t b = rows * (p.row_bytes + (p.row_axes.empty() ? 0 : 256));
    if (p.array.policy == PackagePolicy::partitioned_in) in += b;
    if (p.array.policy == PackagePolicy::partitioned_out) out += b;
  }
  const std::uint64_t cap = dev.capacity();
  const std::uint64_t used = dev.used();
  const std::uint64_t free = cap > used ? cap - used : 0;
  if (in + out > free) {
    throw Error(
        ErrorKind::out_of_memory,
        fmt::format("work packages: a package of {} rows needs {} of device memory ({} of "
                    "inputs, {} of outputs) but {} has {} free of {}: use a smaller size=",
                    size_, human_bytes(static_cast<double>(in + out)),
                    human_bytes(static_cast<double>(in)), human_bytes(static_cast<double>(out)),
                    dev.label(), human_bytes(static_cast<double>(free)),
                    human_bytes(static_cast<double>(cap))));
  }
  if (in == 0) return options_.depth;
  const std::uint64_t slots = (free - out) / in;
  return static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(options_.depth), slots - 1));
}

void PackageEngine::tune(std::vector<ArrayPlan>& plans, const AccessPattern& access,
                         const PackageLaunch& launch_one, const std::vector<RmaWindow*>& windows) {
  double alive = failed_ ? 0.0 : 1.0;
  allreduce_in_place(&alive, 1, MPI_DOUBLE, MPI_SUM, env_.comm());
  const auto procs = static_cast<index_t>(std::max(1.0, alive));
  // Seconds per package (a) and per row (b), measured on this rank's first rows: a is the
  // quicker of two one-row packages (the fixed cost, with one row's work: an upper bound), b the
  // mean over a package of N/(16P) rows (rows of an irregular workload differ, so one row would
  // mislead). One untimed launch first pays the one-off costs (replicated inputs sent, buffers
  // allocated).
  const index_t r2 = std::clamp<index_t>(rows_ / (16 * procs), 1, rows_);
  double measured[2] = {0, 0};  // a (summed over ranks), b (the largest)
  collectively(env_.comm(), [&] {
    if (failed_) return;
    index_t first = domain_[0].begin() + rows_ * env_.rank() / std::max(1, env_.size());
    for (const ArrayPlan& p : plans) {
      if (p.array.policy == PackagePolicy::replicated_in || p.array.block.shape.is_null()) continue;
      first = p.array.block.shape[0].begin();
      break;
    }
    first = std::min(first, domain_[0].end() - r2);
    Slot probe = make_slot(plans, r2);
    const auto time_rows = [&](index_t r) {
      const Shape pkg = domain_.with_sig(0, Sig(first, first + r));
      Timer t;
      fetch(probe, pkg, plans, windows);
      wait_all(static_cast<int>(probe.requests.size()), probe.requests.data(), "MPI_Rget", false);
      probe.requests.clear();
      prefetch_to_device(probe, pkg, plans);
      launch(probe, pkg, plans, access, launch_one);
      return t.seconds();
    };
    try {
      time_rows(1);
      measured[0] = std::min(time_rows(1), time_rows(1));
      measured[1] = time_rows(r2) / static_cast<double>(r2);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::device_failed) throw;
      failed_ = true;
      failure_ = e.what();
    }
  });
  double overhead = measured[0];
  allreduce_in_place(&overhead, 1, MPI_DOUBLE, MPI_SUM, env_.comm());
  double per_row = measured[1];
  allreduce_in_place(&per_row, 1, MPI_DOUBLE, MPI_MAX, env_.comm());
  overhead_s_ = overhead / static_cast<double>(procs);
  row_s_ = per_row;
  // A device's time is about (N/P) b + (N/(P g)) a + (d+1) g b_max: the rows, the overhead of its
  // packages, and the tail, when the slowest device still holds its current package and d
  // prefetched ones; it is least at g = sqrt(N a / (P (d+1) b_max)). At least four packages per
  // device, so dispatch has something to balance.
  const double n = static_cast<double>(rows_);
  const double held = static_cast<double>(options_.depth + 1);
  const double best =
      per_row > 0 ? std::sqrt(n * overhead_s_ / (static_cast<double>(procs) * held * per_row))
                  : 1.0;
  const index_t most = std::max<index_t>(1, rows_ / (4 * procs));
  size_ = std::clamp<index_t>(static_cast<index_t>(std::llround(best)), 1, most);
  fetched_bytes_ = 0;
  returned_bytes_ = 0;
  overlapped_ = 0;
}

void PackageEngine::dispatch(const std::vector<index_t>& ids, const std::vector<index_t>& ranges,
                             bool rerouted, std::vector<ArrayPlan>& plans,
                             const AccessPattern& access, const PackageLaunch& launch_one,
                             const std::vector<RmaWindow*>& windows, RmaWindow& queue, double t0,
                             PackageReport& report) {
  const int me = env_.rank();
  const int procs = env_.size();
  std::vector<Slot> slots;
  if (!failed_) {
    for (int i = 0; i <= depth_; ++i) slots.push_back(make_slot(plans, size_));
  }
  int victim = 0;  // queues tried so far: this rank's, then the next ranks' in turn
  // One claim at a time, for as many packages as there are free slots: a victim busy computing
  // answers only between its packages, so a thief takes what it can hold at once.
  bool claiming = false;
  MPI_Request claim = MPI_REQUEST_NULL;
  std::int64_t claim_old = 0;
  std::int64_t claim_n = 0;
  std::int64_t claim_add = 0;
  const auto count_state = [&](Slot::State st) {
    return static_cast<int>(
        std::count_if(slots.begin(), slots.end(), [&](const Slot& x) { return x.state == st; }));
  };
  // Gives the packages a completed claim won to the slots reserved for it. A queue's counter holds
  // two counts in one word, taken from the front by its owner (low half) and from the back by
  // thieves (high half), so one atomic add hands out distinct packages and sees both: the owner
  // keeps the start of its rows, thieves take the far end (classic work stealing).
  const auto take_claimed = [&](bool keep) {
    const int v = (me + victim) % procs;
    const index_t lo = ranges[static_cast<std::size_t>(2 * v)];
    const index_t hi = ranges[static_cast<std::size_t>(2 * v + 1)];
    const index_t front = claim_old & 0xffffffff;
    const index_t back = claim_old >> 32;
    const index_t left = hi - lo - front - back;
    const index_t won = std::clamp<index_t>(left, 0, claim_n);
    if (left <= claim_n) ++victim;  // that queue is empty now, and stays so
    index_t i = 0;
    for (Slot& x : slots) {
      if (x.state != Slot::State::claiming) continue;
      x.state = Slot::State::free;
      if (i >= won) continue;
      const index_t at = v == me ? lo + front + i : hi - 1 - back - i;
      ++i;
      const index_t id = ids[static_cast<std::size_t>(at)];
      if (!keep) {
        report.abandoned.push_back(id);
        continue;
      }
      x.id = id;
      x.rerouted = rerouted;
      x.sequence = sequence_++;
      if (v != me) ++report.stolen;
      fetch(x, package(id), plans, windows);
      x.state = Slot::State::fetching;
    }
  };
  // The device failed: what this rank holds goes back to the others in the next round.
  const auto abandon_all = [&] {
    if (claiming) {
      wait_all(1, &claim, "MPI_Rget_accumulate", false);
      claiming = false;
      take_claimed(false);
    }
    for (Slot& x : slots) {
      if (x.state != Slot::State::fetching && x.state != Slot::State::ready) continue;
      wait_all(static_cast<int>(x.requests.size()), x.requests.data(), "MPI_Rget", false);
      x.requests.clear();
      report.abandoned.push_back(x.id);
      x.state = Slot::State::free;
    }
  };
  // While the device computes, this rank answers the others' claims and gets (MPI progresses only
  // inside MPI calls); cleared when the round ends, however it ends.
  struct Hook {
    Device& dev;
    ~Hook() { dev.set_wait_hook({}); }
  } hook{device(env_)};
  const MPI_Comm comm = env_.comm();
  device(env_).set_wait_hook([comm] { poke_progress(comm); });
  // On an error, one-sided transfers into the slots' buffers finish before the buffers go.
  struct Settle {
    std::vector<Slot>& slots;
    bool& claiming;
    MPI_Request& claim;
    ~Settle() {
      if (claiming) MPI_Wait(&claim, MPI_STATUS_IGNORE);
      for (Slot& x : slots) {
        if (!x.requests.empty()) {
          MPI_Waitall(static_cast<int>(x.requests.size()), x.requests.data(), MPI_STATUSES_IGNORE);
        }
      }
    }
  } settle{slots, claiming, claim};
  int idle_spins = 0;
  while (true) {
    bool progressed = false;
    if (claiming) {
      int done = 0;
      check_mpi(MPI_Test(&claim, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done != 0) {
        claiming = false;
        progressed = true;
        take_claimed(true);
      }
    }
    // Packages whose rows arrived go to the device (their copies overlap the next launch).
    const auto advance = [&] {
      for (Slot& x : slots) {
        if (x.state == Slot::State::fetching && !any_pending(x.requests)) {
          prefetch_to_device(x, package(x.id), plans);
          x.state = Slot::State::ready;
          progressed = true;
        } else if (x.state == Slot::State::returning && !any_pending(x.requests)) {
          x.state = Slot::State::free;
          progressed = true;
        }
      }
    };
    advance();
    const int held = count_state(Slot::State::fetching) + count_state(Slot::State::ready);
    if (!failed_ && !claiming && victim < procs && held < depth_ + 1) {
      const int v = (me + victim) % procs;
      claim_n = std::min(count_state(Slot::State::free), depth_ + 1 - held);
      if (ranges[static_cast<std::size_t>(2 * v)] >= ranges[static_cast<std::size_t>(2 * v + 1)]) {
        ++victim;  // an empty queue: nothing to claim
        progressed = true;
      } else if (claim_n > 0) {
        claim_add = v == me ? claim_n : claim_n << 32;
        check_mpi(MPI_Rget_accumulate(&claim_add, 1, MPI_INT64_T, &claim_old, 1, MPI_INT64_T, v, 0,
                                      1, MPI_INT64_T, MPI_SUM, queue.get(), &claim),
                  "MPI_Rget_accumulate");
        claiming = true;
        int reserved = 0;
        for (Slot& x : slots) {
          if (x.state == Slot::State::free && reserved < claim_n) {
            x.state = Slot::State::claiming;
            ++reserved;
          }
        }
        progressed = true;
        // A claim on this rank's own queue completes at once: take its packages and start their
        // transfers now, so they overlap the launch below instead of following it.
        if (v == me) {
          wait_all(1, &claim, "MPI_Rget_accumulate", false);
          claiming = false;
          take_claimed(true);
          advance();
        }
      }
    }
    Slot* next = nullptr;
    for (Slot& x : slots) {
      if (x.state == Slot::State::ready && (next == nullptr || x.sequence < next->sequence))
        next = &x;
    }
    if (next != nullptr) {
      // Serve the others before computing: without an asynchronous progress thread, MPI answers
      // their claims and gets on this rank only inside MPI calls, and a launch makes none.
      poke_progress(env_.comm());
      report.max_ahead = std::max(report.max_ahead, count_state(Slot::State::fetching) +
                                                        count_state(Slot::State::ready) - 1);
      const Shape pkg = package(next->id);
      const double start = MPI_Wtime() - t0;
      LaunchRecord rec;
      try {
        rec = launch(*next, pkg, plans, access, launch_one);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::device_failed) throw;
        failed_ = true;
        failure_ = e.what();
        abandon_all();
        continue;
      }
      report.busy_s += rec.seconds;
      report.computed.push_back({next->id, me, start, MPI_Wtime() - t0, next->rerouted});
      give_back(*next, pkg, plans, windows);
      next->state = next->requests.empty() ? Slot::State::free : Slot::State::returning;
      idle_spins = 0;
      continue;
    }
    if (progressed) continue;
    const bool busy = claiming || std::any_of(slots.begin(), slots.end(), [](const Slot& x) {
                        return x.state != Slot::State::free;
                      });
    if (!busy && (failed_ || victim >= procs)) break;
    // Waiting for a claim or rows from a rank that is computing: poll, leaving the core to the
    // others (emulated devices' threads, ranks sharing cores) a little longer each time.
    if (++idle_spins < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(idle_spins, 500)));
    }
  }
  report.wall_s = MPI_Wtime() - t0;
}

// What identifies the arrays of a run: when a later run passes the same ones, their plans,
// windows and device copies are reused (no collective set-up per run).
std::string PackageEngine::signature(const std::vector<PackageArray>& arrays) {
  std::string sig;
  for (const PackageArray& a : arrays) {
    sig += fmt::format("{}:{}:{}:{};", static_cast<int>(a.policy), a.block.data,
                       a.block.shape.is_null() ? std::string("null") : a.block.shape.str(),
                       a.element_size);
  }
  return sig;
}

void PackageEngine::prepare(std::vector<PackageArray> arrays) {
  const MPI_Comm comm = env_.comm();
  int same = queue_ && signature(arrays) == signature_ ? 1 : 0;
  allreduce_in_place(&same, 1, MPI_INT, MPI_MIN, comm);
  if (same != 0) {
    // The same memory, perhaps with new contents and another kernel's access patterns.
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      plans_[i].array.reads = arrays[i].reads;
      if (plans_[i].resident) plans_[i].resident->host_modified = true;
    }
    return;
  }
  windows_.clear();
  owned_windows_.clear();  // collective: every rank found the arrays changed
  plans_.clear();
  signature_.clear();
  plans_ = plan_arrays(std::move(arrays));
  Device& dev = device(env_);
  collectively(comm, [&] {
    if (dev.uses_host_memory() || failed_) return;
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      ArrayPlan& p = plans_[i];
      if (p.array.policy != PackagePolicy::replicated_in) continue;
      p.resident = make_resident(env_, p.array.block, p.array.block.shape, nullptr);
      if (p.resident->spilled) {
        throw Error(ErrorKind::out_of_memory,
                    fmt::format("work packages: replicated input {} ({}) does not fit device {}", i,
                                human_bytes(static_cast<double>(p.array.block.shape.size()) *
                                            static_cast<double>(p.array.element_size)),
                                dev.label()));
      }
    }
  });
  // Every rank exposes its rows of the partitioned arrays, and its queue.
  windows_.assign(plans_.size(), nullptr);
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    const ArrayPlan& p = plans_[i];
    if (p.array.policy == PackagePolicy::replicated_in) continue;
    const HostRegion& b = p.array.block;
    const std::size_t bytes =
        b.shape.is_null() ? 0 : static_cast<std::size_t>(b.shape.extent(0)) * p.row_bytes;
    owned_windows_.push_back(std::make_unique<RmaWindow>(b.data, bytes, comm));
    windows_[i] = owned_windows_.back().get();
  }
  if (!queue_) queue_ = std::make_unique<RmaWindow>(1, comm);
  depth_ = -1;  // to be found for these arrays
  signature_ = signature(arrays_of(plans_));
}

std::vector<PackageArray> PackageEngine::arrays_of(const std::vector<ArrayPlan>& plans) {
  std::vector<PackageArray> out;
  for (const ArrayPlan& p : plans) out.push_back(p.array);
  return out;
}

void PackageEngine::reset_queue() {
  // Taken from the front and from the back: none yet. Under an exclusive lock of this rank's own
  // window, so no claim of another rank is half-way through it.
  check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, env_.rank(), 0, queue_->get()), "MPI_Win_lock");
  queue_->counters()[0] = 0;
  check_mpi(MPI_Win_unlock(env_.rank(), queue_->get()), "MPI_Win_unlock");
}

PackageReport PackageEngine::run(const std::string& kernel, const AccessPattern& access,
                                 std::vector<PackageArray> arrays,
                                 const PackageLaunch& launch_one) {
  (void)kernel;
  const MPI_Comm comm = env_.comm();
  const int me = env_.rank();
  const int procs = env_.size();
  prepare(std::move(arrays));
  std::vector<ArrayPlan>& plans = plans_;
  const std::vector<RmaWindow*>& windows = windows_;
  Device& dev = device(env_);
  const DeviceCounters before = dev.counters();
  fetched_bytes_ = 0;
  returned_bytes_ = 0;
  overlapped_ = 0;
  const auto with_epochs = [&](const auto& fn) {
    collectively(comm, [&] {
      RmaEpoch q(queue_->get());
      std::vector<std::unique_ptr<RmaEpoch>> epochs;
      for (RmaWindow* w : windows) {
        if (w != nullptr) epochs.push_back(std::make_unique<RmaEpoch>(w->get()));
      }
      fn();
    });
  };
  if (size_ == 0) with_epochs([&] { tune(plans, access, launch_one, windows); });
  if (depth_ < 0) {
    collectively(comm, [&] { depth_ = usable_depth(plans); });
    // A queue counts its packages in half a 64-bit word.
    if (count() > (index_t{1} << 30)) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: {} packages are too many (at most 2^30): use a "
                              "larger size= than {}",
                              count(), size_));
    }
  }

  PackageReport report;
  report.size = size_;
  report.count = count();
  report.depth = depth_;
  std::vector<index_t> ids(static_cast<std::size_t>(count()));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<index_t>(i);
  std::vector<index_t> ranges = home_ranges(plans);
  bool rerouted = false;
  reset_queue();
  barrier(comm);
  const double t0 = MPI_Wtime();
  std::int64_t done = 0;
  for (int round = 1;; ++round) {
    report.rounds = round;
    const std::size_t known = report.abandoned.size();
    with_epochs([&] {
      dispatch(ids, ranges, rerouted, plans, access, launch_one, windows, *queue_, t0, report);
    });
    // One exchange: what each rank abandoned, whether its device works, what it computed.
    const std::int64_t mine[3] = {static_cast<std::int64_t>(report.abandoned.size() - known),
                                  failed_ ? 0 : 1,
                                  static_cast<std::int64_t>(report.computed.size())};
    std::vector<std::int64_t> all(static_cast<std::size_t>(3 * procs));
    allgather(mine, 3, MPI_INT64_T, all.data(), comm);
    std::vector<int> counts(static_cast<std::size_t>(procs));
    std::vector<int> offsets(static_cast<std::size_t>(procs), 0);
    std::vector<int> working;
    int total = 0;
    done = 0;
    for (int r = 0; r < procs; ++r) {
      const auto u = static_cast<std::size_t>(r);
      counts[u] = static_cast<int>(all[3 * u]);
      offsets[u] = total;
      total += counts[u];
      if (all[3 * u + 1] != 0) working.push_back(r);
      done += all[3 * u + 2];
    }
    // No device left and packages not computed: devices that failed while the package size was
    // tuned (size=auto) never held a package, so nothing was abandoned, yet nothing was computed.
    if (working.empty() && (total > 0 || done < count())) {
      throw Error(ErrorKind::device_failed,
                  fmt::format("work packages: every device failed; {} of {} packages were not "
                              "computed{}",
                              count() - done, count(),
                              failure_.empty() ? "" : " (this rank: " + failure_ + ")"));
    }
    if (total == 0) break;
    // What failed devices held goes to the devices still working, in a new round.
    std::vector<index_t> next(static_cast<std::size_t>(total));
    check_mpi(
        MPI_Allgatherv(report.abandoned.data() + known, counts[static_cast<std::size_t>(me)],
                       MPI_INT64_T, next.data(), counts.data(), offsets.data(), MPI_INT64_T, comm),
        "MPI_Allgatherv");
    std::sort(next.begin(), next.end());
    std::fill(ranges.begin(), ranges.end(), 0);
    const auto w = static_cast<index_t>(working.size());
    for (index_t i = 0; i < w; ++i) {
      const int r = working[static_cast<std::size_t>(i)];
      ranges[static_cast<std::size_t>(2 * r)] = total * i / w;
      ranges[static_cast<std::size_t>(2 * r + 1)] = total * (i + 1) / w;
    }
    ids = std::move(next);
    rerouted = true;
    reset_queue();
    barrier(comm);  // no claim on a queue before its owner reset it
  }
  report.idle_s = std::max(0.0, report.wall_s - report.busy_s);
  const DeviceCounters after = dev.counters();
  report.h2d_bytes = after.bytes_in - before.bytes_in;
  report.d2h_bytes = after.bytes_out - before.bytes_out;
  report.evictions = after.evictions - before.evictions;
  report.evicted_bytes = after.evicted_bytes - before.evicted_bytes;
  report.bytes_fetched = fetched_bytes_;
  report.bytes_returned = returned_bytes_;
  report.overlapped = overlapped_;
  report.device_failed = failed_;
  report.failure = failure_;
  // Every package exactly once: a broken queue would show here, not as a wrong result later.
  if (done != count()) {
    // Name the first package missing or computed twice.
    std::vector<std::int64_t> times(static_cast<std::size_t>(count()), 0);
    for (const PackageRecord& r : report.computed) ++times[static_cast<std::size_t>(r.id)];
    allreduce_in_place(times.data(), static_cast<int>(times.size()), MPI_INT64_T, MPI_SUM, comm);
    const auto odd =
        std::find_if(times.begin(), times.end(), [](std::int64_t t) { return t != 1; });
    throw Error(ErrorKind::internal,
                fmt::format("work packages: {} packages were computed, of {}; package {} {} times",
                            done, count(), odd - times.begin(), odd == times.end() ? 1 : *odd));
  }
  return report;
}

}  // namespace detail

// ---- WorkPackages
// --------------------------------------------------------------------------------

WorkPackages::WorkPackages(Environment& env, Shape domain, PackageOptions options,
                           std::string partition, std::string label)
    : env_(env),
      engine_(std::make_unique<detail::PackageEngine>(env, std::move(domain), options,
                                                      std::move(partition), std::move(label))) {}
WorkPackages::~WorkPackages() = default;

const Shape& WorkPackages::domain() const noexcept {
  return engine_->domain();
}
index_t WorkPackages::size() const noexcept {
  return engine_->size();
}
index_t WorkPackages::count() const noexcept {
  return engine_->count();
}
Shape WorkPackages::package(index_t id) const {
  return engine_->package(id);
}
double WorkPackages::tuned_overhead_s() const noexcept {
  return engine_->overhead_s();
}
double WorkPackages::tuned_row_s() const noexcept {
  return engine_->row_s();
}
bool WorkPackages::device_failed() const noexcept {
  return engine_->failed();
}

PackageReport WorkPackages::run_erased(const std::string& kernel, const AccessPattern& access,
                                       std::vector<detail::PackageArray> arrays,
                                       const detail::PackageLaunch& launch_one) {
  return engine_->run(kernel, access, std::move(arrays), launch_one);
}

}  // namespace hit
