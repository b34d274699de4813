#pragma once
// One round of work-package dispatch on one rank (docs/packages.md): claim packages (claim
// protocol, claim_queue.hpp) into free slots, fetch their rows and copy them to the device while
// the package before computes, launch them in claim order, give their results back; when the
// device fails, hand back everything held, for the next round. Internal to src/packages/.
//
// A slot's states: free -> claiming (reserved for a pending claim) -> fetching (rows arriving) ->
// ready (rows on the host, copy to the device issued) -> launched -> returning (results on their
// way to their owners) -> free. A claim that wins fewer packages than it reserved frees the rest.

#include <cstdint>
#include <vector>

#include "hit/work_packages.hpp"
#include "packages/claim_queue.hpp"
#include "packages/engine.hpp"

namespace hit::detail {

// What a round dispatches.
struct Round {
  const std::vector<index_t>& ids;        // the packages, by position
  const std::vector<QueueRange>& queues;  // each rank's positions
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
  int held() const { return count(Slot::State::fetching) + count(Slot::State::ready); }
  bool busy() const;
  // Each returns whether anything changed.
  bool poll_claim();
  bool advance_slots();
  bool claim_more();
  void take_claimed(bool keep);
  Slot* next_ready();
  void compute(Slot& slot);
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
  std::uint64_t sequence_ = 0;  // claims so far: packages launch in this order
  int idle_spins_ = 0;
};

}  // namespace hit::detail
