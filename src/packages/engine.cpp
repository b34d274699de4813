// The work-package engine (engine.hpp): construction, the arrays kept between runs (plans, MPI
// windows, replicated inputs on the device), the package-size tuner and the prefetch depth that
// fits the device.

#include "packages/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/timer.hpp"
#include "hit/device.hpp"
#include "hit/topology/device_params.hpp"
#include "packages/claim_queue.hpp"

namespace hit::detail {

namespace {

// What identifies the arrays of a run: when a later run passes the same ones, their plans,
// windows and device copies are reused (no collective set-up per run).
std::string signature(const std::vector<PackageArray>& arrays) {
  std::string sig;
  for (const PackageArray& a : arrays) {
    sig += fmt::format("{}:{}:{}:{};", static_cast<int>(a.policy), a.block.data,
                       a.block.shape.is_null() ? std::string("null") : a.block.shape.str(),
                       a.element_size);
  }
  return sig;
}

std::vector<PackageArray> arrays_of(const std::vector<ArrayPlan>& plans) {
  std::vector<PackageArray> out;
  for (const ArrayPlan& p : plans) out.push_back(p.array);
  return out;
}

}  // namespace

PackageEngine::PackageEngine(Environment& env, Shape domain, PackageOptions options,
                             Partition partition)
    : env_(env), domain_(std::move(domain)), options_(options), partition_(std::move(partition)) {
  if (domain_.is_null() || domain_.empty()) {
    throw Error(ErrorKind::invalid_argument, "work packages: the domain is empty");
  }
  if (domain_[0].stride() != 1) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("work packages: the domain's first axis {} must have stride 1", domain_.str()));
  }
  if (partition_.spec().empty() || !(partition_.domain() == domain_)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: the partition must be one of the domain {} "
                            "(hit::partition(spec, domain)), not of {}",
                            domain_.str(), partition_.domain().str()));
  }
  rows_ = domain_.extent(0);
  if (options_.size > rows_) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: size={} is larger than the domain's {} rows ({})",
                            options_.size, rows_, domain_.str()));
  }
  size_ = options_.size;
}

Shape PackageEngine::package(index_t id) const {
  if (size_ == 0 || id < 0 || id >= count()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: package {} does not exist ({} packages)", id, count()));
  }
  const index_t first = domain_[0].begin() + id * size_;
  return domain_.with_sig(0, Sig(first, std::min(first + size_, domain_[0].end())));
}

Shape PackageEngine::packages(index_t first, index_t n) const {
  const Shape from = package(first);
  const Shape to = package(first + std::max<index_t>(n, 1) - 1);
  return domain_.with_sig(0, Sig(from[0].begin(), to[0].end()));
}

bool PackageEngine::prepare(std::vector<PackageArray> arrays) {
  const MPI_Comm comm = env_.comm();
  // One reduction for both: whether every rank has the same arrays as before, and whether none
  // withdrew in the last run (0 somewhere: the devices are measured again).
  int flags[2] = {queue_ && signature(arrays) == signature_ ? 1 : 0, reprobe_ ? 0 : 1};
  allreduce_in_place(flags, 2, MPI_INT, MPI_MIN, comm);
  reprobe_ = false;
  withdrawn_ = false;
  const bool measure_again = flags[1] == 0;
  if (flags[0] != 0) {
    // The same memory, perhaps with new contents and another kernel's access patterns.
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      plans_[i].array.reads = arrays[i].reads;
      if (plans_[i].resident) plans_[i].resident->host_modified = true;
    }
    return measure_again;
  }
  windows_.clear();
  owned_windows_.clear();  // collective: every rank found the arrays changed
  plans_.clear();
  signature_.clear();
  plans_ = plan_arrays(env_, domain_[0], std::move(arrays));
  copy_replicated_to_device();
  open_windows();
  if (!queue_) queue_ = std::make_unique<RmaWindow>(queue_words, comm);
  depth_ = -1;  // to be found for these arrays
  signature_ = signature(arrays_of(plans_));
  return measure_again;
}

void PackageEngine::zero_sums() {
  sums_.assign(plans_.size(), {});
  bool reduced = false;
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    if (plans_[i].array.policy != PackagePolicy::reduced_out) continue;
    sums_[i].assign(whole_bytes(plans_[i]), 0);
    reduced = true;
  }
  // A launch's blocks run at once on a host device's threads, and each would add into the same
  // elements of the package's sums. Every rank passes arrays of the same policies: the agreement
  // is made by all or none.
  if (!reduced) return;
  const bool shared_sums = device(env_).kind() != DeviceKind::cuda && partition_.threads() > 1;
  collectively(env_.comm(), [&] {
    if (shared_sums) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: a reduced output needs a package's blocks run one "
                              "at a time on {} (one thread: partition single), not '{}'",
                              device(env_).label(), partition_.spec()));
    }
  });
}

void PackageEngine::sum_over_ranks() {
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    const ArrayPlan& p = plans_[i];
    if (p.array.policy != PackagePolicy::reduced_out) continue;
    const index_t count = p.array.block.shape.size();
    if (count > std::numeric_limits<int>::max()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("work packages: reduced output {} has {} elements, more than one "
                              "MPI reduction takes",
                              i, count));
    }
    allreduce_in_place(sums_[i].data(), static_cast<int>(count), p.array.mpi, MPI_SUM, env_.comm());
    std::memcpy(p.array.block.data, sums_[i].data(), sums_[i].size());
  }
}

void PackageEngine::copy_replicated_to_device() {
  Device& dev = device(env_);
  collectively(env_.comm(), [&] {
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
}

// Every rank exposes its rows of the partitioned arrays (collective).
void PackageEngine::open_windows() {
  windows_.assign(plans_.size(), nullptr);
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    const ArrayPlan& p = plans_[i];
    if (p.array.policy == PackagePolicy::replicated_in ||
        p.array.policy == PackagePolicy::reduced_out || p.array.policy == PackagePolicy::local)
      continue;
    const Region& b = p.array.block;
    const std::size_t bytes =
        b.shape.is_null() ? 0 : static_cast<std::size_t>(b.shape.extent(0)) * p.row_bytes;
    owned_windows_.push_back(std::make_unique<RmaWindow>(b.data, bytes, env_.comm()));
    windows_[i] = owned_windows_.back().get();
  }
}

int PackageEngine::usable_depth() const {
  Device& dev = device(env_);
  if (dev.uses_host_memory() || failed_) return options_.depth;
  // Device bytes of one package: its input rows (a slot's device copy) and its output rows
  // (staged by the launch). Rows are padded on the device: count a cache line per row.
  std::uint64_t in = 0;
  std::uint64_t out = 0;
  for (const ArrayPlan& p : plans_) {
    const auto held = static_cast<std::uint64_t>(held_rows(p, size_ * batch_));
    const std::uint64_t b = held * (p.row_bytes + (p.row_axes.empty() ? 0 : 256));
    // A slot's device copies: its input rows and its package-local arrays.
    if (p.array.policy == PackagePolicy::partitioned_in || p.array.policy == PackagePolicy::local)
      in += b;
    if (p.array.policy == PackagePolicy::partitioned_out) out += b;
    if (p.array.policy == PackagePolicy::reduced_out) out += whole_bytes(p);
  }
  const std::uint64_t cap = dev.capacity();
  const std::uint64_t used = dev.used();
  const std::uint64_t free = cap > used ? cap - used : 0;
  if (in + out > free) {
    throw Error(
        ErrorKind::out_of_memory,
        fmt::format(
            "work packages: a launch of {} rows needs {} of device memory ({} of "
            "inputs and package-local arrays, {} of outputs) but {} has {} free of {}: use a "
            "smaller size=",
            size_ * batch_, human_bytes(static_cast<double>(in + out)),
            human_bytes(static_cast<double>(in)), human_bytes(static_cast<double>(out)),
            dev.label(), human_bytes(static_cast<double>(free)),
            human_bytes(static_cast<double>(cap))));
  }
  if (in == 0) return options_.depth;
  const std::uint64_t slots = (free - out) / in;
  return static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(options_.depth), slots - 1));
}

// Every working rank times one launch of the same package (the middle one, whose rows are as
// representative as any), so that devices are compared on equal work: package times measured
// during dispatch are of different rows on each device, and an irregular workload (Mandelbrot)
// would make a slow device that happened to get cheap rows look fast. The result is not kept
// (the package is computed again by whoever takes it). Collective; on the first run of a kernel.
double PackageEngine::timed_launch(Slot& slot, const Shape& pkg, const KernelCall& call) {
  fetch(slot, pkg);
  wait_all(static_cast<int>(slot.requests.size()), slot.requests.data(), "MPI_Rget", false);
  slot.requests.clear();
  const Timer t;
  prefetch_to_device(slot, pkg);
  launch(slot, pkg, call);
  return t.seconds();
}

// Collective: the ranks for which `times` holds time one launch of `pkg` (the others return 0,
// as does a rank whose device fails, which is then out). The rows come from their owners, who
// may be launching too: every rank answers the others' gets while its device computes.
double PackageEngine::timed_probe(bool times, const Shape& pkg, const KernelCall& call) {
  double seconds = 0;
  collectively(env_.comm(), [&] {
    if (!times || failed_) return;
    Slot slot = make_slot(pkg.extent(0));
    const ProgressWhileWaiting progress(device(env_), env_.comm());
    try {
      seconds = timed_launch(slot, pkg, call);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::device_failed) throw;
      fail(e);
    }
  });
  return seconds;
}

void PackageEngine::probe(const KernelCall& call) {
  // Each device launches its own batch of the middle packages: what it costs per package there,
  // its launch's fixed cost included, is what the placement rule needs (a package sized for slow
  // devices would also be too short to time the fastest one alone).
  const index_t units = std::clamp<index_t>(batch_, 1, count());
  const Shape pkg =
      packages(std::clamp<index_t>(count() / 2 - units / 2, 0, count() - units), units);
  std::vector<double> all = allgather(timed_probe(true, pkg, call), env_.comm());
  const std::vector<index_t> launched = allgather(units, env_.comm());
  const auto per_package = [&](std::size_t r, double seconds) {
    return seconds / static_cast<double>(launched[r]);
  };
  int first = -1;  // the quickest rank, per package
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto f = static_cast<std::size_t>(first);
    if (all[r] > 0 && (first < 0 || per_package(r, all[r]) < per_package(f, all[f])))
      first = static_cast<int>(r);
  }
  // The quickest device times its launch again, alone: while every device probed at once, the
  // others' host threads shared its cores (an emulated device's CPU clock does not count what it
  // loses so, a real one's work does not stop for it), and a quickest time inflated so makes
  // every other device look faster than it is, enough for one 20 times slower to take a package
  // that outlasts the run. In the dispatch the slow devices' threads mostly sleep. The others wait
  // meanwhile, sleeping on an oversubscribed machine, and answer its gets.
  if (first >= 0) {
    double alone = 0;
    {
      const PatientWaits patient(env_);
      alone = timed_probe(env_.rank() == first, pkg, call);
    }
    broadcast(alone, first, env_.comm());
    auto& q = all[static_cast<std::size_t>(first)];
    if (alone > 0) q = std::min(q, alone);
  }
  // One launch shorter than a millisecond says little about a device's speed on a shared core
  // (scheduling, a first allocation): times below that are not told apart.
  constexpr double floor_s = 1e-3;
  slowness_.assign(all.size(), 1.0);
  if (first >= 0) {
    const auto f = static_cast<std::size_t>(first);
    const double quickest = per_package(f, std::max(all[f], floor_s));
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r] > 0) slowness_[r] = per_package(r, std::max(all[r], floor_s)) / quickest;
    }
    profile_.prime(per_package(f, all[f]));
  }
  fetched_bytes_ = 0;
  returned_bytes_ = 0;
  overlapped_ = 0;
}

// Collective: the ranks for which `times` holds measure a (the quicker of two one-row packages:
// the fixed cost, with one row's work, an upper bound) and b (the mean over `rows` rows from the
// middle of the domain, so that devices are compared on equal work: an irregular workload's rows
// differ); the others return zeros, as does a rank whose device fails, which is then out. One
// untimed launch first pays the one-off costs (replicated inputs sent, buffers allocated). The
// rows come from their owners, who may be measuring too: every rank answers the others' gets
// while its device computes; the launches alone are timed.
PackageEngine::RowCosts PackageEngine::timed_rows(bool times, index_t rows,
                                                  const KernelCall& call) {
  RowCosts costs;
  collectively(env_.comm(), [&] {
    if (!times || failed_) return;
    const index_t first = domain_[0].begin() + (rows_ - rows) / 2;
    Slot probe = make_slot(rows);
    const ProgressWhileWaiting progress(device(env_), env_.comm());
    const auto time_rows = [&](index_t r) {
      return timed_launch(probe, domain_.with_sig(0, Sig(first, first + r)), call);
    };
    try {
      time_rows(1);
      costs.overhead = std::min(time_rows(1), time_rows(1));
      costs.per_row = time_rows(rows) / static_cast<double>(rows);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::device_failed) throw;
      fail(e);
      costs = RowCosts{};
    }
  });
  return costs;
}

// Collective: the rank whose `per_row` is the least positive one measures again while the others
// wait (sleeping on an oversubscribed machine, answering its gets); its costs on every rank, zeros
// when no rank measured.
PackageEngine::RowCosts PackageEngine::timed_alone(double per_row, index_t rows,
                                                   const KernelCall& call) {
  const std::vector<double> all = allgather(per_row, env_.comm());
  int first = -1;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] > 0 && (first < 0 || all[r] < all[static_cast<std::size_t>(first)]))
      first = static_cast<int>(r);
  }
  if (first < 0) return {};
  RowCosts alone;
  {
    const PatientWaits patient(env_);
    alone = timed_rows(env_.rank() == first, rows, call);
  }
  broadcast(alone, first, env_.comm());
  return alone;
}

void PackageEngine::tune(const KernelCall& call) {
  double alive = failed_ ? 0.0 : 1.0;
  allreduce_in_place(&alive, 1, MPI_DOUBLE, MPI_SUM, env_.comm());
  const auto procs = static_cast<index_t>(std::max(1.0, alive));
  // Seconds per package (a) and per row (b), measured by every rank on the same rows, the middle
  // N/(16P) of the domain.
  const index_t r2 = std::clamp<index_t>(rows_ / (16 * procs), 1, rows_);
  const RowCosts mine = timed_rows(true, r2, call);
  const double overhead = mine.overhead;  // a (this rank's)
  const double per_row = mine.per_row;    // b (this rank's)
  // The fastest device's a and b, and the devices' worth in fastest devices, P' = sum of
  // b_min / b_r (a device 100 times slower adds 0.01).
  const double none = std::numeric_limits<double>::max();
  double a_min = per_row > 0 ? overhead : none;
  double b_min = per_row > 0 ? per_row : none;
  double speed = per_row > 0 ? 1.0 / per_row : 0.0;
  allreduce_in_place(&a_min, 1, MPI_DOUBLE, MPI_MIN, env_.comm());
  allreduce_in_place(&b_min, 1, MPI_DOUBLE, MPI_MIN, env_.comm());
  allreduce_in_place(&speed, 1, MPI_DOUBLE, MPI_SUM, env_.comm());
  const bool measured = b_min < none && a_min < none && speed > 0;
  // The ratios of the devices' speeds come from the launches at once; the fastest device's own
  // costs, as in probe(), from launches alone: while every rank measured, the others' host
  // threads shared its cores, and its b inflated so shrinks the packages (measured: 92 to 140
  // rows beside two devices 20 times slower, 176 alone, each package costing a again).
  const double worth = measured ? std::max(1.0, speed * b_min) : static_cast<double>(procs);
  const double b_at_once = b_min;  // the fastest device's b, measured beside the others
  if (measured && procs > 1) {
    const RowCosts quickest = timed_alone(per_row, r2, call);
    if (quickest.per_row > 0) {
      a_min = std::min(a_min, quickest.overhead);
      b_min = std::min(b_min, quickest.per_row);
    }
  }
  overhead_s_ = measured ? a_min : 0.0;
  row_s_ = measured ? b_min : 0.0;
  // The run takes about (N/P') b + (N/(P' g)) a + g b_min: the rows, the overhead of the packages,
  // and the tail. Placement by expected finish time leaves the last packages to the devices that
  // finish them first, so the run ends within about one of the fastest device's packages after
  // it (before that placement the tail was the slowest device's d + 1 held packages). It is least
  // at g = sqrt(N a / (P' b_min)). At least four packages per device, so dispatch has something
  // to balance.
  const double n = static_cast<double>(rows_);
  const double best = measured ? std::sqrt(n * overhead_s_ / (worth * row_s_)) : 1.0;
  const index_t most = std::max<index_t>(1, rows_ / (4 * procs));
  const index_t launch = std::clamp<index_t>(static_cast<index_t>(std::llround(best)), 1, most);
  size_ = launch;
  batch_ = 1;
  probe_units_ = 1;
  if (options_.batch == 0 && measured) {
    // Equal packages for unequal devices leave the slow ones idle at the end of a run: a package
    // of theirs would end long after the fastest device's last, so placement keeps them off the
    // last ones. Each device's launch gets the rows that the rule above gives for it alone, L_r =
    // sqrt(N_r a_r / b_r), with N_r = N (1/b_r) / sum(1/b) the rows it computes: the fewer rows a
    // device computes, the less its launches may cost in overhead and the more its idle end
    // costs. A package is the smallest launch (at least 1/max_batch of the fastest device's), and
    // each device launches as many consecutive packages at once as make its L_r.
    const double b_r = per_row > 0 ? per_row : 0.0;
    const double n_r = b_r > 0 ? n / (b_r * speed) : 0.0;
    const double l_r = b_r > 0 && b_r > b_at_once ? std::sqrt(n_r * std::max(overhead, 0.0) / b_r)
                                                  : static_cast<double>(launch);
    const auto rows_r = std::clamp<index_t>(static_cast<index_t>(std::llround(l_r)), 1, launch);
    index_t least = b_r > 0 ? rows_r : launch;
    allreduce_in_place(&least, 1, MPI_INT64_T, MPI_MIN, env_.comm());
    size_ = std::max<index_t>(least, (launch + max_batch - 1) / max_batch);
    batch_ = b_r > 0 ? std::max<index_t>(1, (rows_r + size_ / 2) / size_) : 1;
    probe_units_ = batch_;
    allreduce_in_place(&probe_units_, 1, MPI_INT64_T, MPI_MAX, env_.comm());
  }
  fetched_bytes_ = 0;
  returned_bytes_ = 0;
  overlapped_ = 0;
}

}  // namespace hit::detail
