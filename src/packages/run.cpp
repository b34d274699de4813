// A work-package run (engine.hpp): the arrays prepared, the package size tuned and the prefetch
// depth found on the first run, then rounds of dispatch. After each round the ranks exchange what
// failed devices abandoned; it is dispatched again, in a new round, to the devices still working,
// until every package has been computed exactly once.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/topology/device_params.hpp"
#include "packages/claim_queue.hpp"
#include "packages/dispatch.hpp"
#include "packages/engine.hpp"

namespace hit::detail {

namespace {

// What a rank says after a round.
struct RoundEnd {
  std::int64_t abandoned = 0;  // packages it held when its device failed or withdrew, this round
  std::int64_t working = 0;    // 1: its device works and has not withdrawn
  std::int64_t computed = 0;   // packages it computed in this run so far
  std::int64_t withdrawn = 0;  // 1: its device withdrew (its packages kept missing)
};

// Every rank's RoundEnd, summed up.
struct RoundSummary {
  std::vector<int> counts;   // packages abandoned, per rank
  std::vector<int> offsets;  // where each rank's abandoned ones go in the gathered list
  std::vector<int> working;  // ranks whose devices work
  int total = 0;             // packages abandoned
  std::int64_t done = 0;     // packages computed
  int withdrawn = 0;         // ranks withdrawn
};

RoundSummary summarise(const std::vector<RoundEnd>& all) {
  RoundSummary s;
  for (std::size_t r = 0; r < all.size(); ++r) {
    s.counts.push_back(static_cast<int>(all[r].abandoned));
    s.offsets.push_back(s.total);
    s.total += s.counts.back();
    if (all[r].working != 0) s.working.push_back(static_cast<int>(r));
    s.done += all[r].computed;
    s.withdrawn += all[r].withdrawn != 0 ? 1 : 0;
  }
  return s;
}

// Every rank's abandoned packages (this rank's: `mine`), sorted.
std::vector<index_t> gather_abandoned(const index_t* mine, const RoundSummary& s, int me,
                                      MPI_Comm comm) {
  std::vector<index_t> all(static_cast<std::size_t>(s.total));
  check_mpi(MPI_Allgatherv(mine, s.counts[static_cast<std::size_t>(me)], MPI_INT64_T, all.data(),
                           s.counts.data(), s.offsets.data(), MPI_INT64_T, comm),
            "MPI_Allgatherv");
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

// Runs `fn` collectively inside passive-target epochs of the queue window and the arrays' windows.
template <class F>
void PackageEngine::with_epochs(const F& fn) {
  collectively(env_.comm(), [&] {
    RmaEpoch q(queue_->get());
    std::vector<std::unique_ptr<RmaEpoch>> epochs;
    for (RmaWindow* w : windows_) {
      if (w != nullptr) epochs.push_back(std::make_unique<RmaEpoch>(w->get()));
    }
    fn();
  });
}

PackageReport PackageEngine::run(const std::string& kernel, const KernelCall& call,
                                 std::vector<PackageArray> arrays) {
  // Who computes which package is decided by the devices' measured times as the run goes; a dry
  // run measures nothing, and a price read from its dispatch would be noise. Every process is in
  // the dry run: the error is everyone's.
  if (env_.trace() != nullptr) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages ('{}') are dispatched by the devices' measured times, "
                            "which --hit-advise does not price yet: advise a static schedule",
                            kernel));
  }
  const bool measure_again = prepare(std::move(arrays));
  zero_sums();
  const DeviceCounters before = device(env_).counters();
  fetched_bytes_ = 0;
  returned_bytes_ = 0;
  overlapped_ = 0;
  start_run(call);
  // What this device measured holds for one kernel, one package size and one probe.
  const std::string profiled = fmt::format("{}/{}/{}", kernel, size_, probe_units_);
  if (profiled != profiled_ || measure_again) {
    profiled_ = profiled;
    profile_ = PackageProfile{};
    fetch_profile_ = PackageProfile{};
    with_epochs([&] { probe(call); });
  }
  PackageReport report;
  report.size = size_;
  report.count = count();
  report.batch = batch_;
  report.depth = 0;  // the depth this device's measured times asked for (the dispatch finds it)
  const std::int64_t done = dispatch_rounds(call, report);
  finish_report(before, report);
  check_exactly_once(report, done);
  sum_over_ranks();
  return report;
}

// The package size (size=auto) and the depth, found on the first run with these arrays.
void PackageEngine::start_run(const KernelCall& call) {
  if (size_ == 0) with_epochs([&] { tune(call); });
  if (depth_ >= 0) return;
  collectively(env_.comm(), [&] { depth_ = usable_depth(); });
  // A queue counts its packages in half a 64-bit word.
  if (count() > (index_t{1} << 30)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: {} packages are too many (at most 2^30): use a "
                            "larger size= than {}",
                            count(), size_));
  }
}

// Returns the packages computed, over all ranks.
std::int64_t PackageEngine::dispatch_rounds(const KernelCall& call, PackageReport& report) {
  const MPI_Comm comm = env_.comm();
  const int me = env_.rank();
  const int procs = env_.size();
  std::vector<index_t> ids(static_cast<std::size_t>(count()));
  std::iota(ids.begin(), ids.end(), index_t{0});
  std::vector<bool> taking_part;
  std::vector<QueueRange> queues = first_queues(taking_part);
  bool rerouted = false;
  reset_queue(*queue_, me, published_per_package_ns());
  barrier(comm);
  const PatientWaits patient(env_);
  const double t0 = MPI_Wtime();
  for (int round = 1;; ++round) {
    report.rounds = round;
    const std::size_t known = report.abandoned.size();
    const Round this_round{ids, queues, taking_part, rerouted, t0};
    with_epochs([&] { Dispatcher(*this, call, this_round, *queue_, report).run(); });
    // One exchange: what each rank abandoned, whether its device works, what it computed.
    std::int64_t computed = 0;
    for (const PackageRecord& r : report.computed) computed += r.packages;
    const RoundEnd mine{static_cast<std::int64_t>(report.abandoned.size() - known),
                        out_of_rounds() ? 0 : 1, computed, withdrawn_ ? 1 : 0};
    std::vector<RoundEnd> ends = allgather(mine, comm);
    // Every device still working withdrew: they are slow, not broken, so they compute what is
    // left (a withdrawal never leaves a run without devices).
    if (std::none_of(ends.begin(), ends.end(), [](const RoundEnd& e) { return e.working != 0; })) {
      withdrawn_ = false;
      for (RoundEnd& e : ends) {
        if (e.withdrawn != 0) e.working = 1;
      }
    }
    const RoundSummary s = summarise(ends);
    // No device left and packages not computed: devices that failed while the package size was
    // tuned (size=auto) never held a package, so nothing was abandoned, yet nothing was computed.
    if (s.working.empty() && (s.total > 0 || s.done < count())) {
      throw Error(ErrorKind::device_failed,
                  fmt::format("work packages: every device failed; {} of {} packages were not "
                              "computed{}",
                              count() - s.done, count(),
                              failure_.empty() ? "" : " (this rank: " + failure_ + ")"));
    }
    if (s.total == 0) return s.done;
    // What failed devices held goes to the devices still working, in a new round.
    ids = gather_abandoned(report.abandoned.data() + known, s, me, comm);
    // Over the devices still working, by their measured speeds (equal where unmeasured).
    std::vector<double> speeds(static_cast<std::size_t>(procs), 0.0);
    {
      const double slow = slowness_.size() == static_cast<std::size_t>(procs)
                              ? slowness_[static_cast<std::size_t>(me)]
                              : 1.0;
      const std::vector<double> all = allgather(out_of_rounds() ? 0.0 : slow, comm);
      bool every = true;
      for (const int r : s.working) every = every && all[static_cast<std::size_t>(r)] > 0;
      for (const int r : s.working)
        speeds[static_cast<std::size_t>(r)] = every ? 1.0 / all[static_cast<std::size_t>(r)] : 1.0;
    }
    queues = queues_of_sizes(split_by_speed(s.total, speeds));
    // What a failed device held goes to every device still working, however slow: the packages
    // left are few, and the placement rule still keeps a slow device off the last ones.
    taking_part.assign(static_cast<std::size_t>(procs), true);
    rerouted = true;
    reset_queue(*queue_, me, published_per_package_ns());
    barrier(comm);  // no claim on a queue before its owner reset it
  }
}

std::int64_t PackageEngine::published_per_package_ns() const {
  if (out_of_rounds()) return -1;
  return static_cast<std::int64_t>(std::llround(profile_.seconds() * 1e9));
}

// The home queues of a run's first round, by the speeds known now: every working device's
// measured time per package (earlier runs, the size tuner), else the emulated slowdowns of the
// binding. Devices known to be equally fast (within 5 %) keep the layout's queues (the packages of
// the rows each rank owns, which need no transfer); unlike ones get shares proportional to their
// speeds, in rank order, so that every queue takes about as long as the others. `taking_part`:
// per rank, whether it takes part in the round (devices_taking_part, where every speed is
// measured; a device left out gets an empty queue).
std::vector<QueueRange> PackageEngine::first_queues(std::vector<bool>& taking_part) const {
  const int procs = env_.size();
  std::vector<QueueRange> owners = home_queues(plans_, procs, domain_[0], size_, count());
  struct Speed {
    double measured = 0;  // packages per second; 0 unknown; -1 failed
    double binding = 1;   // relative, from the binding
  };
  Speed mine;
  const double slow =
      slowness_.size() == static_cast<std::size_t>(procs) ? slowness_[env_.rank()] : 1.0;
  if (failed_) {
    mine.measured = -1;
  } else if (profile_.known()) {
    mine.measured = 1.0 / slow;
  }
  Device& dev = device(env_);
  if (dev.kind() == DeviceKind::emu)
    mine.binding = 1.0 / std::max(1.0, DeviceParams::of(dev.binding()).slowdown.at(0));
  const std::vector<Speed> all = allgather(mine, env_.comm());
  bool every_measured = true;
  for (const Speed& s : all) every_measured = every_measured && s.measured != 0;
  std::vector<double> speeds;
  for (const Speed& s : all)
    speeds.push_back(s.measured < 0 ? 0.0 : every_measured ? s.measured : s.binding);
  double lo = 0;
  double hi = 0;
  for (const double v : speeds) {
    if (v <= 0) continue;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  taking_part.assign(all.size(), true);
  if (hi == 0 || hi <= 1.05 * lo) return owners;
  if (every_measured) {
    std::vector<double> slowness;
    for (const double v : speeds) slowness.push_back(v > 0 ? 1.0 / v : 0.0);
    taking_part = devices_taking_part(slowness, count());
    for (std::size_t r = 0; r < speeds.size(); ++r) {
      if (speeds[r] <= 0) {
        taking_part[r] = true;  // a failed device: the dispatch leaves it out as before
      } else if (!taking_part[r]) {
        speeds[r] = 0;  // an empty queue
      }
    }
  }
  return queues_of_sizes(split_by_speed(count(), speeds));
}

void PackageEngine::finish_report(const DeviceCounters& before, PackageReport& report) const {
  report.idle_s = std::max(0.0, report.wall_s - report.busy_s);
  const DeviceCounters after = device(env_).counters();
  report.h2d_bytes = after.bytes_in - before.bytes_in;
  report.d2h_bytes = after.bytes_out - before.bytes_out;
  report.evictions = after.evictions - before.evictions;
  report.evicted_bytes = after.evicted_bytes - before.evicted_bytes;
  report.bytes_fetched = fetched_bytes_;
  report.bytes_returned = returned_bytes_;
  report.overlapped = overlapped_;
  report.device_failed = failed_;
  report.withdrawn = withdrawn_;
  report.failure = failure_;
}

// Every package exactly once: a broken queue would show here, not as a wrong result later.
void PackageEngine::check_exactly_once(const PackageReport& report, std::int64_t done) const {
  if (done == count()) return;
  // Name the first package missing or computed twice.
  std::vector<std::int64_t> times(static_cast<std::size_t>(count()), 0);
  for (const PackageRecord& r : report.computed) {
    for (index_t id = r.id; id < r.id + r.packages; ++id) ++times[static_cast<std::size_t>(id)];
  }
  allreduce_in_place(times.data(), static_cast<int>(times.size()), MPI_INT64_T, MPI_SUM,
                     env_.comm());
  const auto odd = std::find_if(times.begin(), times.end(), [](std::int64_t t) { return t != 1; });
  throw Error(ErrorKind::internal,
              fmt::format("work packages: {} packages were computed, of {}; package {} {} times",
                          done, count(), odd - times.begin(), odd == times.end() ? 1 : *odd));
}

}  // namespace hit::detail
