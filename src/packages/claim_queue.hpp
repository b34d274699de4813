#pragma once
// The queues of work packages and the claim protocol (hit/work_packages.hpp, docs/packages.md).
// Each rank's queue is a range of a round's package list and one int64 counter in its rank's MPI
// window (beside what the rank publishes for placement, QueueWord). The counter holds two counts in
// one word, taken from the front by its owner (low half) and from the back by thieves (high half),
// so one atomic add hands out distinct packages and sees both: the owner keeps the start of its
// rows, thieves take the far end (classic work stealing). Internal to src/packages/.

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "hit/device.hpp"
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
// `total` packages in contiguous blocks, rank after rank, of the sizes given (summing to total).
std::vector<QueueRange> queues_of_sizes(const std::vector<index_t>& sizes);

// The int64 words of a rank's queue window: the claim counter, then what the rank publishes for
// the others' placement decisions (placement.hpp): when it expects to be free (ns on the round's
// clock), its time per package (ns; 0 not measured, -1 its device failed), the packages it holds;
// last, 1 once another rank's survey found every queue empty (the round's claims are over).
enum QueueWord : int {
  counter_word = 0,
  free_at_word = 1,
  per_package_word = 2,
  held_word = 3,
  over_word = 4
};
constexpr int queue_words = 5;
// The words a survey reads (the over word is only ever read by its own rank).
constexpr int surveyed_words = 4;

// Empties this rank's queue counter (nothing taken yet) and publishes `per_package_ns`, under an
// exclusive lock of its own window so that no claim of another rank is half-way through it.
void reset_queue(const RmaWindow& queue, int me, std::int64_t per_package_ns);

// Lets MPI make progress on operations other ranks target at this one (a few polls: a remote
// accumulate is a message in and a reply out).
void poke_progress(MPI_Comm comm);

// While it lives, the waits of `dev` poke MPI's progress (poke_progress): a rank whose device
// computes still answers the claims and gets the other ranks target at it.
class ProgressWhileWaiting {
 public:
  ProgressWhileWaiting(Device& dev, MPI_Comm comm) : dev_(dev) {
    dev_.set_wait_hook([comm] { poke_progress(comm); });
  }
  ~ProgressWhileWaiting() { dev_.set_wait_hook({}); }
  ProgressWhileWaiting(const ProgressWhileWaiting&) = delete;
  ProgressWhileWaiting& operator=(const ProgressWhileWaiting&) = delete;

 private:
  Device& dev_;
};

// The packages one claim won: positions in the round's package list, from rank `from`'s queue.
struct Claimed {
  int from = 0;
  std::vector<index_t> positions;
};

// What a survey of every rank's window found: the packages left in each queue and each rank's
// published words (free_at_word.., raw).
struct Survey {
  std::vector<index_t> left;  // per queue
  std::vector<std::int64_t> free_at_ns, per_package_ns, held;
  index_t total_left() const noexcept;
};

// One rank's claims in one round. Before a claim, a survey reads every rank's window (one-sided
// atomic reads, all at once): how many packages each queue has left and what each rank published;
// the placement rule decides how many to take, then the claim takes them from this rank's own
// queue while it has some, else from the far end of the queue with the most left. Inside an
// epoch of the queue window.
class ClaimWalk {
 public:
  // `surveyed`: per rank, whether a survey reads its window (a rank that takes no part in the
  // round holds an empty queue and claims nothing; it is seen as taking nothing).
  ClaimWalk(const RmaWindow& queue, const std::vector<QueueRange>& queues,
            const std::vector<bool>& surveyed, int me);
  ~ClaimWalk() { settle(); }
  ClaimWalk(const ClaimWalk&) = delete;  // MPI writes into it while a claim is pending
  ClaimWalk& operator=(const ClaimWalk&) = delete;

  // A survey found every queue empty (they stay so for the round): this rank's, or another's
  // that announced it (announced()).
  bool done() const noexcept { return done_; }
  // Whether another rank's survey found every queue empty: an atomic read of this rank's own
  // window, so that a rank the placement rule left out, waiting to ask again, leaves the round
  // as soon as it ends instead of at its next survey (which a back-off may put milliseconds
  // later, while the others wait for it in the round's closing exchange).
  bool announced();
  // A survey or a claim is in flight.
  bool pending() const noexcept { return phase_ != Phase::idle && phase_ != Phase::surveyed; }
  bool claiming() const noexcept { return phase_ == Phase::claiming; }
  bool surveyed() const noexcept { return phase_ == Phase::surveyed; }

  void start_survey();
  // The completed survey (then claim or drop it).
  const Survey& survey() const noexcept { return survey_; }
  void drop_survey() noexcept;
  // Starts a claim of `count` packages, from the queue the survey chose (own first, else the
  // one with most left). Returns whether the victim is this rank.
  bool start(std::int64_t count);
  // The packages left in this rank's own queue now (an atomic read of its own window: no other
  // rank's progress needed).
  index_t own_left();
  // Claims `count` packages from this rank's own queue, at once (no survey before it).
  Claimed take_own(std::int64_t count);
  // Whether the pending survey or claim completed.
  bool test();
  void wait();
  // What the completed claim won.
  Claimed take();
  // Completes whatever is in flight (before the window's epoch ends).
  void settle() noexcept;

 private:
  enum class Phase { idle, surveying, surveyed, claiming, claimed };
  void finish_survey();
  // Tells every other rank that the queues are empty (once; completed by settle()).
  void announce_over();

  MPI_Win win_;
  const std::vector<QueueRange>& queues_;
  const std::vector<bool>& surveyed_;
  int me_;
  int procs_;
  Phase phase_ = Phase::idle;
  bool done_ = false;
  std::vector<MPI_Request> requests_;
  std::vector<std::int64_t> words_;  // procs * queue_words, from the survey
  Survey survey_;
  int victim_ = 0;
  std::int64_t asked_ = 0;
  std::int64_t add_ = 0;
  std::int64_t old_ = 0;  // the counter before the add
  const std::int64_t over_ = 1;
  std::vector<MPI_Request> announcements_;  // announce_over's puts, one per other rank
};

}  // namespace hit::detail
