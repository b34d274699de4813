#pragma once
// The work-package engine behind hit::WorkPackages (docs/packages.md): what one WorkPackages keeps
// between runs (the arrays' plans and MPI windows, the package size and prefetch depth, whether
// the device failed), the operations on one package that a round of dispatch (dispatch.hpp) and
// the size tuner use, and the run: rounds of dispatch until every package is computed once.
// Internal to src/packages/.
//
//   engine.cpp     construction, the arrays kept between runs, the tuner, the depth
//   slots.cpp      one package in a slot: its rows fetched, copied to the device, launched,
//                  its results given back
//   dispatch.cpp   one round of dispatch (claims, the slots' states, a failing device)
//   run.cpp        the run: rounds, rerouting what a failed device held, the report

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/partition.hpp"
#include "hit/work_packages.hpp"
#include "packages/array_plan.hpp"
#include "packages/claim_queue.hpp"
#include "packages/placement.hpp"
#include "packages/rma_window.hpp"

namespace hit::detail {

// Host memory of one package's rows of one array.
struct RowBuffer {
  std::unique_ptr<unsigned char[]> bytes;
  std::shared_ptr<ResidentState> resident;  // its device copy (inputs on an accelerator)
};

// A package held by this rank: claimed, its inputs arriving, ready, or its results returning.
struct Slot {
  enum class State { free, claiming, fetching, ready, computing, returning };
  State state = State::free;
  index_t id = -1;    // the first of its packages
  index_t units = 0;  // packages launched at once: id .. id + units - 1 (consecutive rows)
  bool rerouted = false;
  std::uint64_t sequence = 0;       // claim order: packages launch in it
  std::uint64_t copied_before = 0;  // launches done when its device copy was issued
  double claimed_at = 0;            // MPI_Wtime when it was won (its rows' transfer time)
  bool remote = false;              // some of its rows come from other ranks
  std::vector<MPI_Request> requests;
  std::vector<RowBuffer> inputs;    // one per partitioned input
  std::vector<RowBuffer> outputs;   // one per partitioned output
  std::vector<RowBuffer> partials;  // one per reduced output: this package's sums
  std::vector<RowBuffer> locals;    // one per package-local array (on the device)
};

// While it lives, the waits of an oversubscribed machine's processes sleep (WaitPolicy::sleep)
// whatever the `wait` setting: in a dispatch round, ranks whose devices are done (or too slow to
// take part) wait for the others' last packages in the round's closing exchange, and while the
// quickest device probes alone the others wait for it; a spinning wait there takes the core a
// computing device needs (measured: two waiting ranks took 60-80 % of a core each beside the one
// computing on 2 cores, and it ran at half its speed).
class PatientWaits {
 public:
  explicit PatientWaits(Environment& env)
      : env_(env),
        before_(env.oversubscribed() ? env.set_wait_policy(WaitPolicy::sleep) : env.wait_policy()) {
  }
  ~PatientWaits() { env_.set_wait_policy(before_); }
  PatientWaits(const PatientWaits&) = delete;
  PatientWaits& operator=(const PatientWaits&) = delete;

 private:
  Environment& env_;
  WaitPolicy before_;
};

// The kernel of one run: its access pattern and how to launch it over one package's rows.
struct KernelCall {
  const AccessPattern& access;
  const PackageLaunch& launch_one;
};

class PackageEngine {
 public:
  // `partition`: of the whole domain; each package's launch uses its plug-in and parameters.
  PackageEngine(Environment& env, Shape domain, PackageOptions options, Partition partition);

  // The most packages a device launches at once (size=auto, batch=auto): a package is at least
  // this fraction of the fastest device's launch.
  static constexpr index_t max_batch = 64;

  const Shape& domain() const noexcept { return domain_; }
  index_t size() const noexcept { return size_; }
  index_t count() const noexcept { return size_ == 0 ? 0 : (rows_ + size_ - 1) / size_; }
  // Packages this device launches at once (size=auto, batch=auto: tuned; else 1).
  index_t batch() const noexcept { return batch_; }
  // Whether some device launches several packages at once (the fastest one's batch is above 1).
  bool batched() const noexcept { return probe_units_ > 1; }
  Shape package(index_t id) const;
  // The rows of packages first .. first + n - 1.
  Shape packages(index_t first, index_t n) const;
  double overhead_s() const noexcept { return overhead_s_; }
  double row_s() const noexcept { return row_s_; }
  bool failed() const noexcept { return failed_; }
  // Out of this run's rounds: its device failed, or withdrew.
  bool out_of_rounds() const noexcept { return failed_ || withdrawn_; }
  bool withdrawn() const noexcept { return withdrawn_; }

  // `kernel`: its name (the measured profiles belong to one kernel).
  PackageReport run(const std::string& kernel, const KernelCall& call,
                    std::vector<PackageArray> arrays);

  // ---- one package (a round of dispatch and the tuner) ------------------------------------------
  Environment& env() const noexcept { return env_; }
  // Launches held ahead of the one computing (found for the current arrays).
  int depth() const noexcept { return depth_; }
  // A slot for a launch of up to `rows` rows (with a device copy of its inputs on an accelerator).
  Slot make_slot(index_t rows) const;
  // Starts the transfers of a package's input rows into the slot.
  void fetch(Slot& slot, const Shape& pkg);
  // Starts the copy of the slot's input rows to the device, on its second stream.
  void prefetch_to_device(Slot& slot, const Shape& pkg);
  // The package's launch. Error(device_failed) when the device fails (then fail() it).
  LaunchRecord launch(Slot& slot, const Shape& pkg, const KernelCall& call);
  // Starts sending a package's results to the owners of their rows, and adds its partial sums
  // of the reduced outputs to this rank's.
  void give_back(Slot& slot, const Shape& pkg);
  // The device failed: it computes nothing from now on, in this run and later ones.
  void fail(const Error& e);
  // This device's packages kept missing (took far longer than its measured time: a device slowed
  // down since it was measured, or unresponsive): it takes no more packages in this run, and the
  // next run measures every device again (the probe), which places it by its speed then.
  void withdraw() noexcept {
    withdrawn_ = true;
    reprobe_ = true;
  }
  // This device's seconds per package and per transfer of a package's rows, kept across the runs
  // of one kernel with one package size (placement.hpp).
  PackageProfile& profile() noexcept { return profile_; }
  PackageProfile& fetch_profile() noexcept { return fetch_profile_; }
  // Each rank's time on one package that every rank computed (the middle one) over the quickest
  // rank's: how much slower each device is on the same rows, whatever the rows cost (1 where not
  // measured). profile() holds this device's package times divided by its own ratio: the cost of
  // the packages in the quickest device's seconds, comparable between devices.
  const std::vector<double>& slowness() const noexcept { return slowness_; }

 private:
  // ---- kept between runs of the same arrays (engine.cpp)
  // Returns whether some rank asked that the devices be measured again (withdraw()).
  bool prepare(std::vector<PackageArray> arrays);
  void copy_replicated_to_device();
  // A reduced output's sums start at zero on every rank, each package's are added as it is given
  // back, and the ranks' are summed into every rank's tile at the end of the run (collective).
  void zero_sums();
  void sum_over_ranks();
  void open_windows();
  template <class F>
  void with_epochs(const F& fn);
  // What a device's package costs: a (seconds per package) and b (seconds per row).
  struct RowCosts {
    double overhead = 0;
    double per_row = 0;
  };
  RowCosts timed_rows(bool times, index_t rows, const KernelCall& call);
  RowCosts timed_alone(double per_row, index_t rows, const KernelCall& call);
  void tune(const KernelCall& call);
  void probe(const KernelCall& call);
  double timed_probe(bool times, const Shape& pkg, const KernelCall& call);
  // Fetches a package's rows, waits for them, and returns the seconds of its launch alone (the
  // device's speed: the copy to the device and the kernel).
  double timed_launch(Slot& slot, const Shape& pkg, const KernelCall& call);
  int usable_depth() const;

  // ---- the run (run.cpp)
  void start_run(const KernelCall& call);
  std::int64_t dispatch_rounds(const KernelCall& call, PackageReport& report);
  void finish_report(const DeviceCounters& before, PackageReport& report) const;
  std::vector<QueueRange> first_queues(std::vector<bool>& taking_part) const;
  std::int64_t published_per_package_ns() const;
  void check_exactly_once(const PackageReport& report, std::int64_t done) const;

  // ---- one package (slots.cpp)
  std::uint64_t move_rows(bool get, RowBuffer& buf, const Shape& pkg, const ArrayPlan& p,
                          const RmaWindow& window, std::vector<MPI_Request>& requests) const;
  Region host_rows(const ArrayPlan& p, const RowBuffer& buf, const Shape& rows) const;
  LaunchArg launch_arg(const ArrayPlan& p, Slot& slot, const Shape& pkg, std::size_t& in,
                       std::size_t& out, std::size_t& reduced, std::size_t& local) const;

  Environment& env_;
  Shape domain_;
  PackageOptions options_;
  Partition partition_;
  index_t rows_ = 0;
  index_t size_ = 0;
  index_t batch_ = 1;
  index_t probe_units_ = 1;  // packages of the probe: the fastest device's batch
  int depth_ = -1;           // -1: not yet found for the current arrays
  double overhead_s_ = 0;
  double row_s_ = 0;
  bool failed_ = false;
  bool withdrawn_ = false;  // in this run
  bool reprobe_ = false;    // this rank withdrew: the next run probes again
  std::string failure_;
  std::uint64_t launches_ = 0;
  std::uint64_t fetched_bytes_ = 0;
  std::uint64_t returned_bytes_ = 0;
  std::uint64_t overlapped_ = 0;
  std::vector<ArrayPlan> plans_;
  std::vector<std::vector<unsigned char>> sums_;  // per plan: a reduced output's sums here
  std::string signature_;
  std::vector<std::unique_ptr<RmaWindow>> owned_windows_;
  std::vector<RmaWindow*> windows_;
  std::unique_ptr<RmaWindow> queue_;
  std::string profiled_;  // the kernel and package size the profiles were measured for
  PackageProfile profile_;
  PackageProfile fetch_profile_;
  std::vector<double> slowness_;
};

}  // namespace hit::detail
