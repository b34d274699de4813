#pragma once
// The queues of work packages and the claim protocol (hit/work_packages.hpp, docs/packages.md).
// Each rank's queue is a range of a round's package list and one int64 counter in its rank's MPI
// window. The counter holds two counts in one word, taken from the front by its owner (low half)
// and from the back by thieves (high half), so one atomic add hands out distinct packages and sees
// both: the owner keeps the start of its rows, thieves take the far end (classic work stealing).
// Internal to src/packages/.

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "hit/shape.hpp"
#include "packages/array_plan.hpp"
#include "packages/rma_window.hpp"

namespace hit::detail {

// A rank's queue in one round: positions [begin, end) of the round's package list.
struct QueueRange {
  index_t begin = 0;
  index_t end = 0;
  bool empty() const noexcept { return begin >= end; }
};

// The queues at the start of a run: a package's home is the owner of its first row (of the first
// partitioned output, else input): a contiguous run of packages per block. With no array laid
// out, the packages in blocks over the ranks.
std::vector<QueueRange> home_queues(const std::vector<ArrayPlan>& plans, int procs,
                                    const Sig& domain_rows, index_t size, index_t count);
// `total` packages in blocks over `ranks` (the others' queues empty).
std::vector<QueueRange> spread_queues(index_t total, const std::vector<int>& ranks, int procs);

// Empties this rank's queue counter (nothing taken yet), under an exclusive lock of its own window
// so that no claim of another rank is half-way through it.
void reset_queue(const RmaWindow& queue, int me);

// Lets MPI make progress on operations other ranks target at this one (a few polls: a remote
// accumulate is a message in and a reply out).
void poke_progress(MPI_Comm comm);

// The packages one claim won: positions in the round's package list, from rank `from`'s queue.
struct Claimed {
  int from = 0;
  std::vector<index_t> positions;
};

// One rank's claims in one round: its own queue first, then the next ranks' in turn, one claim at
// a time, each for as many packages as it can hold (a victim busy computing answers only between
// its packages, so a thief takes what it can hold at once). Inside an epoch of the queue window.
class ClaimWalk {
 public:
  ClaimWalk(const RmaWindow& queue, const std::vector<QueueRange>& queues, int me);
  ~ClaimWalk() { settle(); }
  ClaimWalk(const ClaimWalk&) = delete;  // MPI writes into it while a claim is pending
  ClaimWalk& operator=(const ClaimWalk&) = delete;

  // Every queue tried and found empty.
  bool done() const noexcept { return tried_ >= procs_; }
  bool pending() const noexcept { return pending_; }
  // The queue tried now and whether it was empty from the start.
  int victim() const noexcept { return (me_ + tried_) % procs_; }
  bool victim_empty() const noexcept;
  void skip_victim() noexcept { ++tried_; }

  // Starts a claim of `count` packages from victim() (a one-sided atomic add).
  void start(std::int64_t count);
  // Whether the pending claim completed (then take() it).
  bool test();
  void wait();
  // What the completed claim won; moves on to the next queue when this one is empty now.
  Claimed take();
  // Completes a pending claim whatever happened (before the window's epoch ends).
  void settle() noexcept;

 private:
  MPI_Win win_;
  const std::vector<QueueRange>& queues_;
  int me_;
  int procs_;
  int tried_ = 0;  // queues tried so far
  bool pending_ = false;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::int64_t asked_ = 0;
  std::int64_t add_ = 0;
  std::int64_t old_ = 0;  // the counter before the add
};

}  // namespace hit::detail
