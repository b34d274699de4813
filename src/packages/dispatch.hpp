#pragma once
// One round of work-package dispatch on one rank (docs/packages.md): claim packages (claim
// protocol, claim_queue.hpp) into free slots, fetch their rows and copy them to the device while
// the package before computes, launch them in claim order, give their results back; when the
// device fails, hand back everything held, for the next round. Internal to src/packages/.
//
// A slot's states: free -> claiming (reserved for a pending claim) -> fetching (rows arriving) ->
// ready (rows on the host, copy to the device issued) -> launched -> returning (results on their
// way to their owners) -> free. A claim that wins fewer packages than it reserved frees the rest.
//
// Placement (placement.hpp): before each claim a survey reads what every rank published (its
// queue's packages left, when it expects to be free, its time per package, what it holds); the
// rank claims only the packages it would finish before any other device could, and holds no more
// ahead than its measured transfer and compute times need. A rank the rule leaves out asks again
// a little later, until every queue is empty.

#include <cstdint>
#include <vector>

#include "hit/work_packages.hpp"
#include "packages/claim_queue.hpp"
#include "packages/engine.hpp"
#include "packages/placement.hpp"

namespace hit::detail {

// What a round dispatches.
struct Round {
  const std::vector<index_t>& ids;        // the packages, by position
  const std::vector<QueueRange>& queues;  // each rank's positions
  const std::vector<bool>& taking_part;   // per rank: false, too slow to finish one package
                                          // before the others finish all (it claims nothing)
  bool rerouted = false;                  // a failed device held these packages
  double t0 = 0;                          // the run's start (MPI_Wtime)
};

class Dispatcher {
 public:
  // Inside the epochs of the queue window and the arrays' windows.
  Dispatcher(PackageEngine& engine, const KernelCall& call, const Round& round,
             const RmaWindow& queue, PackageReport& report);
  // However the round ends: one-sided transfers into the slots' buffers finish before the buffers
  // go, and the device's wait hook is cleared.
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Until every queue is empty and every slot free (or the device failed and handed back what it
  // held). Sets the report's wall_s.
  void run();

 private:
  int count(Slot::State state) const;
  // Launches held (the one computing included), and their packages.
  int held() const {
    return count(Slot::State::fetching) + count(Slot::State::ready) + count(Slot::State::computing);
  }
  std::int64_t held_packages() const;
  // Packages per launch in this round: the device's batch (one in a rerouted round, whose packages
  // need not be neighbours).
  index_t batch_now() const { return round_.rerouted ? 1 : engine_.batch(); }
  bool busy() const;
  // Each returns whether anything changed.
  bool poll_claim();
  bool advance_slots();
  bool claim_more();
  bool decide();
  std::vector<DeviceOutlook> outlooks_of(const std::vector<double>& cost_s,
                                         const std::vector<double>& free_at_s,
                                         const std::vector<std::int64_t>& held_now,
                                         double now) const;
  void take_claimed(bool keep, const Claimed& won);
  // Marks `n` free slots as claiming (for the claim being made): a launch each.
  void reserve(int n);
  // Launches held ahead of the one computing, from this device's measured times.
  int depth_now() const;
  // Publishes when this rank expects to be free, its time per package and what it holds (the
  // package computing included), for the others' placement decisions.
  void publish();
  Slot* next_ready();
  void compute(Slot& slot);
  // A package that took `seconds` where `expected` was measured missed: over miss_factor times
  // as long (and 10 ms more). A device that misses misses_to_withdraw packages in a row
  // withdraws.
  static constexpr double miss_factor = 20;
  static constexpr int misses_to_withdraw = 2;
  static bool missed(double seconds, double expected);
  // Whether another rank's device works, as far as this rank knows (a withdrawal must leave one).
  bool others_working() const;
  void abandon_all();
  void back_off();

  PackageEngine& engine_;
  const KernelCall& call_;
  const Round& round_;
  PackageReport& report_;
  MPI_Comm comm_;
  int me_;
  std::vector<Slot> slots_;
  ClaimWalk claims_;
  MPI_Win claims_window_;
  // Each rank's cost per package (in the quickest device's seconds) as the last survey saw it
  // (0 not measured, -1 its device failed).
  std::vector<double> known_cost_s_;
  bool surveyed_once_ = false;  // known_cost_s_ holds what a survey saw
  std::uint64_t sequence_ = 0;  // claims so far: packages launch in this order
  int idle_spins_ = 0;
  double next_survey_ = 0;  // MPI_Wtime before which this rank, left out by the rule, waits
  int missed_ = 0;          // packages in a row that missed
  int declined_ = 0;        // decisions in a row that left this rank out
  std::int64_t published_[3] = {0, 0, 0};  // free_at, per_package, held (MPI reads them)
  // While the device computes, this rank answers the others' claims and gets. Last: the
  // destructor's waits still poke progress.
  ProgressWhileWaiting progress_;
};

}  // namespace hit::detail
