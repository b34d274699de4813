// The queues of work packages and the claim protocol (claim_queue.hpp).

#include "packages/claim_queue.hpp"

#include <algorithm>

#include "hit/core/collective.hpp"

namespace hit::detail {

std::vector<QueueRange> spread_queues(index_t total, const std::vector<int>& ranks, int procs) {
  std::vector<QueueRange> queues(static_cast<std::size_t>(procs));
  const auto w = static_cast<index_t>(ranks.size());
  for (index_t i = 0; i < w; ++i) {
    queues[static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)])] = {total * i / w,
                                                                            total * (i + 1) / w};
  }
  return queues;
}

std::vector<QueueRange> home_queues(const std::vector<ArrayPlan>& plans, int procs,
                                    const Sig& domain_rows, index_t size, index_t count) {
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
  if (home == nullptr) {
    std::vector<int> all(static_cast<std::size_t>(procs));
    for (int r = 0; r < procs; ++r) all[static_cast<std::size_t>(r)] = r;
    return spread_queues(count, all, procs);
  }
  std::vector<QueueRange> queues(static_cast<std::size_t>(procs));
  const index_t d0 = domain_rows.begin();
  for (const Segment& seg : home->owners) {
    const index_t lo = (seg.begin - d0 + size - 1) / size;
    const index_t hi = (seg.end - d0 + size - 1) / size;
    queues[static_cast<std::size_t>(seg.rank)] = {std::min(lo, count), std::min(hi, count)};
  }
  return queues;
}

void reset_queue(const RmaWindow& queue, int me) {
  check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, queue.get()), "MPI_Win_lock");
  queue.counters()[0] = 0;
  check_mpi(MPI_Win_unlock(me, queue.get()), "MPI_Win_unlock");
}

void poke_progress(MPI_Comm comm) {
  for (int i = 0; i < 4; ++i) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  }
}

ClaimWalk::ClaimWalk(const RmaWindow& queue, const std::vector<QueueRange>& queues, int me)
    : win_(queue.get()), queues_(queues), me_(me), procs_(static_cast<int>(queues.size())) {}

bool ClaimWalk::victim_empty() const noexcept {
  return queues_[static_cast<std::size_t>(victim())].empty();
}

void ClaimWalk::start(std::int64_t count) {
  asked_ = count;
  add_ = victim() == me_ ? count : count << 32;
  check_mpi(MPI_Rget_accumulate(&add_, 1, MPI_INT64_T, &old_, 1, MPI_INT64_T, victim(), 0, 1,
                                MPI_INT64_T, MPI_SUM, win_, &request_),
            "MPI_Rget_accumulate");
  pending_ = true;
}

bool ClaimWalk::test() {
  int done = 0;
  check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (done != 0) pending_ = false;
  return done != 0;
}

void ClaimWalk::wait() {
  wait_all(1, &request_, "MPI_Rget_accumulate", false);
  pending_ = false;
}

Claimed ClaimWalk::take() {
  Claimed c;
  c.from = victim();
  const QueueRange q = queues_[static_cast<std::size_t>(c.from)];
  const index_t front = old_ & 0xffffffff;
  const index_t back = old_ >> 32;
  const index_t left = q.end - q.begin - front - back;
  const index_t won = std::clamp<index_t>(left, 0, asked_);
  if (left <= asked_) ++tried_;  // that queue is empty now, and stays so
  for (index_t i = 0; i < won; ++i)
    c.positions.push_back(c.from == me_ ? q.begin + front + i : q.end - 1 - back - i);
  return c;
}

void ClaimWalk::settle() noexcept {
  if (pending_) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  pending_ = false;
}

}  // namespace hit::detail
