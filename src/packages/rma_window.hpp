#pragma once
// RAII owners of MPI one-sided windows and their passive-target epochs, and byte transfers split
// into MPI-sized pieces (the work-package runtime moves rows with them).

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hit/core/collective.hpp"

namespace hit::detail {

// A window over memory this rank already holds (a tile's rows), or allocated by MPI.
class RmaWindow {
 public:
  // Collective over `comm`. `base` may be null with `bytes` 0 (a rank exposing nothing).
  RmaWindow(void* base, std::size_t bytes, MPI_Comm comm) {
    check_mpi(MPI_Win_create(bytes == 0 ? nullptr : base, static_cast<MPI_Aint>(bytes), 1,
                             MPI_INFO_NULL, comm, &win_),
              "MPI_Win_create");
  }
  // `count` int64 counters (zero) that MPI_Fetch_and_op / MPI_Rget_accumulate advance. The memory
  // is ours, exposed with MPI_Win_create: with MPICH 4.0.2 (ch4:ucx, Debian 12) the counters of an
  // MPI_Win_allocate window of processes on one node alias each other (seen in this project's
  // tests: two ranks' self-targeted accumulates hit one counter).
  RmaWindow(int count, MPI_Comm comm) : owned_(static_cast<std::size_t>(count), 0) {
    check_mpi(
        MPI_Win_create(owned_.data(), static_cast<MPI_Aint>(owned_.size() * sizeof(std::int64_t)),
                       sizeof(std::int64_t), MPI_INFO_NULL, comm, &win_),
        "MPI_Win_create");
    counters_ = owned_.data();
  }
  ~RmaWindow() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }
  RmaWindow(const RmaWindow&) = delete;
  RmaWindow& operator=(const RmaWindow&) = delete;

  MPI_Win get() const noexcept { return win_; }
  std::int64_t* counters() const noexcept { return counters_; }

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<std::int64_t> owned_;
  std::int64_t* counters_ = nullptr;
};

// MPI_Win_lock_all ... MPI_Win_unlock_all (which completes every operation this rank started, at
// the origin and at the target).
class RmaEpoch {
 public:
  explicit RmaEpoch(MPI_Win win) : win_(win) {
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  }
  ~RmaEpoch() { MPI_Win_unlock_all(win_); }
  RmaEpoch(const RmaEpoch&) = delete;
  RmaEpoch& operator=(const RmaEpoch&) = delete;

 private:
  MPI_Win win_;
};

// A one-sided get or put of `bytes` at byte displacement `disp` of `target`'s window, in pieces an
// int count can name; one request per piece is appended to `requests`.
inline void rma_bytes(bool get, void* local, std::size_t bytes, int target, std::size_t disp,
                      MPI_Win win, std::vector<MPI_Request>& requests) {
  constexpr std::size_t piece = std::size_t{1} << 30;
  auto* p = static_cast<unsigned char*>(local);
  for (std::size_t done = 0; done < bytes; done += piece) {
    const int n = static_cast<int>(std::min(piece, bytes - done));
    MPI_Request r = MPI_REQUEST_NULL;
    const auto at = static_cast<MPI_Aint>(disp + done);
    if (get) {
      check_mpi(MPI_Rget(p + done, n, MPI_BYTE, target, at, n, MPI_BYTE, win, &r), "MPI_Rget");
    } else {
      check_mpi(MPI_Rput(p + done, n, MPI_BYTE, target, at, n, MPI_BYTE, win, &r), "MPI_Rput");
    }
    requests.push_back(r);
  }
}

}  // namespace hit::detail
