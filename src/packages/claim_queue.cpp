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

std::vector<QueueRange> queues_of_sizes(const std::vector<index_t>& sizes) {
  std::vector<QueueRange> queues(sizes.size());
  index_t at = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    queues[r] = {at, at + sizes[r]};
    at += sizes[r];
  }
  return queues;
}

void reset_queue(const RmaWindow& queue, int me, std::int64_t per_package_ns) {
  check_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, queue.get()), "MPI_Win_lock");
  std::int64_t* w = queue.counters();
  w[counter_word] = 0;
  w[free_at_word] = 0;
  w[per_package_word] = per_package_ns;
  w[held_word] = 0;
  w[over_word] = 0;
  check_mpi(MPI_Win_unlock(me, queue.get()), "MPI_Win_unlock");
}

void poke_progress(MPI_Comm comm) {
  for (int i = 0; i < 4; ++i) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  }
}

index_t Survey::total_left() const noexcept {
  index_t n = 0;
  for (const index_t l : left) n += l;
  return n;
}

ClaimWalk::ClaimWalk(const RmaWindow& queue, const std::vector<QueueRange>& queues,
                     const std::vector<bool>& surveyed, int me)
    : win_(queue.get()),
      queues_(queues),
      surveyed_(surveyed),
      me_(me),
      procs_(static_cast<int>(queues.size())),
      requests_(static_cast<std::size_t>(procs_), MPI_REQUEST_NULL),
      words_(static_cast<std::size_t>(procs_) * queue_words, 0) {}

void ClaimWalk::start_survey() {
  // Atomic reads (MPI_NO_OP), so a concurrent claim's add or a rank's publishing is seen whole.
  for (int r = 0; r < procs_; ++r) {
    if (!surveyed_[static_cast<std::size_t>(r)]) continue;  // its request stays null
    check_mpi(MPI_Rget_accumulate(nullptr, 0, MPI_INT64_T,
                                  &words_[static_cast<std::size_t>(r) * queue_words],
                                  surveyed_words, MPI_INT64_T, r, 0, surveyed_words, MPI_INT64_T,
                                  MPI_NO_OP, win_, &requests_[static_cast<std::size_t>(r)]),
              "MPI_Rget_accumulate");
  }
  phase_ = Phase::surveying;
}

void ClaimWalk::finish_survey() {
  survey_ = Survey{};
  for (int r = 0; r < procs_; ++r) {
    const std::int64_t* w = &words_[static_cast<std::size_t>(r) * queue_words];
    const QueueRange q = queues_[static_cast<std::size_t>(r)];
    if (!surveyed_[static_cast<std::size_t>(r)]) {  // an empty queue, a device taking nothing
      survey_.left.push_back(0);
      survey_.free_at_ns.push_back(0);
      survey_.per_package_ns.push_back(-1);
      survey_.held.push_back(0);
      continue;
    }
    const index_t front = w[counter_word] & 0xffffffff;
    const index_t back = w[counter_word] >> 32;
    survey_.left.push_back(std::max<index_t>(0, q.end - q.begin - front - back));
    survey_.free_at_ns.push_back(w[free_at_word]);
    survey_.per_package_ns.push_back(w[per_package_word]);
    survey_.held.push_back(w[held_word]);
  }
  if (survey_.total_left() == 0) {
    done_ = true;
    announce_over();
  }
  phase_ = Phase::surveyed;
}

void ClaimWalk::announce_over() {
  if (!announcements_.empty()) return;
  // Puts that complete at their targets by the end of the round's epoch (settle() completes them
  // here first): nothing waits on the others' progress now.
  for (int r = 0; r < procs_; ++r) {
    if (r == me_) continue;
    announcements_.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Raccumulate(&over_, 1, MPI_INT64_T, r, over_word, 1, MPI_INT64_T, MPI_REPLACE,
                              win_, &announcements_.back()),
              "MPI_Raccumulate");
  }
}

bool ClaimWalk::announced() {
  if (done_) return true;
  std::int64_t over = 0;
  check_mpi(MPI_Fetch_and_op(nullptr, &over, MPI_INT64_T, me_, over_word, MPI_NO_OP, win_),
            "MPI_Fetch_and_op");
  check_mpi(MPI_Win_flush(me_, win_), "MPI_Win_flush");
  done_ = over != 0;
  return done_;
}

void ClaimWalk::drop_survey() noexcept {
  if (phase_ == Phase::surveyed) phase_ = Phase::idle;
}

bool ClaimWalk::start(std::int64_t count) {
  // This rank's own queue while it has packages (its rows, no transfer), else the far end of the
  // fullest queue (the rows its owner would reach last).
  victim_ = me_;
  if (survey_.left[static_cast<std::size_t>(me_)] == 0) {
    for (int r = 0; r < procs_; ++r) {
      if (survey_.left[static_cast<std::size_t>(r)] >
          survey_.left[static_cast<std::size_t>(victim_)])
        victim_ = r;
    }
  }
  asked_ = count;
  add_ = victim_ == me_ ? count : count << 32;
  check_mpi(MPI_Rget_accumulate(&add_, 1, MPI_INT64_T, &old_, 1, MPI_INT64_T, victim_, counter_word,
                                1, MPI_INT64_T, MPI_SUM, win_, &requests_[0]),
            "MPI_Rget_accumulate");
  phase_ = Phase::claiming;
  return victim_ == me_;
}

index_t ClaimWalk::own_left() {
  std::int64_t now = 0;
  check_mpi(MPI_Fetch_and_op(nullptr, &now, MPI_INT64_T, me_, counter_word, MPI_NO_OP, win_),
            "MPI_Fetch_and_op");
  check_mpi(MPI_Win_flush(me_, win_), "MPI_Win_flush");
  const QueueRange q = queues_[static_cast<std::size_t>(me_)];
  return std::max<index_t>(0, q.end - q.begin - (now & 0xffffffff) - (now >> 32));
}

Claimed ClaimWalk::take_own(std::int64_t count) {
  victim_ = me_;
  asked_ = count;
  add_ = count;
  check_mpi(MPI_Rget_accumulate(&add_, 1, MPI_INT64_T, &old_, 1, MPI_INT64_T, me_, counter_word, 1,
                                MPI_INT64_T, MPI_SUM, win_, &requests_[0]),
            "MPI_Rget_accumulate");
  phase_ = Phase::claiming;
  wait();
  return take();
}

bool ClaimWalk::test() {
  if (!pending()) return false;
  const int n = phase_ == Phase::surveying ? procs_ : 1;
  int done = 0;
  check_mpi(MPI_Testall(n, requests_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  if (done == 0) return false;
  if (phase_ == Phase::surveying) {
    finish_survey();
  } else {
    phase_ = Phase::claimed;
  }
  return true;
}

void ClaimWalk::wait() {
  if (!pending()) return;
  const int n = phase_ == Phase::surveying ? procs_ : 1;
  wait_all(n, requests_.data(), phase_ == Phase::surveying ? "a survey" : "MPI_Rget_accumulate",
           false);
  if (phase_ == Phase::surveying) {
    finish_survey();
  } else {
    phase_ = Phase::claimed;
  }
}

Claimed ClaimWalk::take() {
  Claimed c;
  c.from = victim_;
  phase_ = Phase::idle;
  const QueueRange q = queues_[static_cast<std::size_t>(c.from)];
  const index_t front = old_ & 0xffffffff;
  const index_t back = old_ >> 32;
  const index_t left = q.end - q.begin - front - back;
  const index_t won = std::clamp<index_t>(left, 0, asked_);
  for (index_t i = 0; i < won; ++i)
    c.positions.push_back(c.from == me_ ? q.begin + front + i : q.end - 1 - back - i);
  return c;
}

void ClaimWalk::settle() noexcept {
  if (!announcements_.empty()) {
    MPI_Waitall(static_cast<int>(announcements_.size()), announcements_.data(),
                MPI_STATUSES_IGNORE);
  }
  if (!pending()) return;
  const int n = phase_ == Phase::surveying ? procs_ : 1;
  MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE);
  phase_ = phase_ == Phase::surveying ? Phase::idle : Phase::claimed;
}

}  // namespace hit::detail
