#include "hit/core/collective.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

#include <string>
#include <thread>
#include <vector>

#include "hit/core/environment.hpp"

namespace hit {

void agree(MPI_Comm comm, const std::exception_ptr& failure) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = failure ? rank : size;
  allreduce_in_place(&first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;

  int kind = static_cast<int>(ErrorKind::internal);
  std::string message;
  if (rank == first) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error& e) {
      kind = static_cast<int>(e.kind());
      message = e.what();
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown failure";
    }
  }
  broadcast(kind, first, comm);
  broadcast(message, first, comm);
  if (size > 1 && first != 0) message = "rank " + std::to_string(first) + ": " + message;
  throw Error::everywhere(static_cast<ErrorKind>(kind), message);
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  std::string out(text, static_cast<std::size_t>(std::max(len, 0)));
  // MPICH appends its call stack on further lines: the first sentence says what happened.
  if (const auto stack = out.find(", error stack:"); stack != std::string::npos) out.resize(stack);
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  return out;
}

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  throw Error(ErrorKind::mpi, std::string(what) + " failed: " + mpi_error_text(code));
}

void wait_all(int count, MPI_Request* requests, const char* what, bool point_to_point) {
  if (count == 0) return;
  if (!Environment::exists()) {
    check_mpi(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), what);
    return;
  }
  Environment& env = Environment::current();
  // A failure announced while this operation is in flight may come from a process that took part
  // in it and failed afterwards: the operation then still completes. So a notice ends the wait
  // only once the operation has made no progress for a grace period.
  constexpr double grace_seconds = 0.05;
  // Sleeping: a few polls catch a message already on its way; then the core goes to the others
  // for a few microseconds at a time (the sleep takes longer: the kernel's timer slack).
  const bool sleeps = env.wait_policy() == WaitPolicy::sleep;
  const long polls_before_pausing = sleeps ? 50 : 2000;
  // A sleeping wait pauses in proportion to how long it has waited (a sixteenth, from 10 µs to
  // 250 µs): a collective that completes quickly is seen within microseconds, and a rank that
  // waits for others still computing (the end of a dispatch round, a slow neighbour) wakes a few
  // thousand times a second instead of tens of thousands, each wake a system call that takes
  // the core from the processes computing (measured: two such waiters took 60-80 % of a core
  // each beside the one computing on 2 cores, halving its speed).
  const double waiting_since = MPI_Wtime();
  double noticed = -1;
  for (long spins = 0;; ++spins) {
    int done = 0;
    check_mpi(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), what);
    if (done != 0) return;
    if (noticed < 0 && env.announcement_pending()) noticed = MPI_Wtime();
    env.while_waiting();
    if (noticed < 0 || MPI_Wtime() - noticed < grace_seconds) {
      // Polling as MPI_Waitall does, but leaving the core to the others after a while: ranks
      // often outnumber cores in tests and on shared nodes.
      if (spins > polls_before_pausing) {
        if (sleeps) {
          const double waited = MPI_Wtime() - waiting_since;
          std::this_thread::sleep_for(
              std::chrono::duration<double>(std::clamp(waited / 16, 10e-6, 250e-6)));
        } else {
          std::this_thread::yield();
        }
      }
      continue;
    }
    try {
      env.check_announcements();
    } catch (...) {
      // The process we wait for may be gone: drop what is pending (receives are cancelled, sends
      // left to complete or be discarded at the end) and report its failure.
      for (int i = 0; point_to_point && i < count; ++i) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&requests[i]);
        MPI_Request_free(&requests[i]);
      }
      throw;
    }
  }
}

void barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  wait_all(1, &req, "MPI_Ibarrier", false);
}

void allreduce_in_place(void* data, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm, &req), "MPI_Iallreduce");
  wait_all(1, &req, "MPI_Iallreduce", false);
}

void allgather(const void* send, int count, MPI_Datatype type, void* recv, MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(send, count, type, recv, count, type, comm, &req), "MPI_Iallgather");
  wait_all(1, &req, "MPI_Iallgather", false);
}

void broadcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(data, count, type, root, comm, &req), "MPI_Ibcast");
  wait_all(1, &req, "MPI_Ibcast", false);
}

void broadcast(std::string& text, int root, MPI_Comm comm) {
  auto length = static_cast<long long>(text.size());
  broadcast(length, root, comm);
  text.resize(static_cast<std::size_t>(length));
  broadcast(text.data(), static_cast<int>(length), MPI_CHAR, root, comm);
}

std::vector<std::string> allgather(const std::string& mine, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const auto lengths = allgather(static_cast<int>(mine.size()), comm);
  std::vector<int> offsets(lengths.size() + 1, 0);
  for (std::size_t r = 0; r < lengths.size(); ++r) offsets[r + 1] = offsets[r] + lengths[r];
  std::string joined(static_cast<std::size_t>(offsets.back()), '\0');
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, joined.data(),
                            lengths.data(), offsets.data(), MPI_CHAR, comm, &req),
            "MPI_Iallgatherv");
  wait_all(1, &req, "MPI_Iallgatherv", false);
  std::vector<std::string> all(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < all.size(); ++r) {
    all[r] =
        joined.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r]));
  }
  return all;
}

std::vector<std::string> gather(const std::string& mine, int root, MPI_Comm comm) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  // Lengths as 64-bit numbers: MPI's counts are ints, so a total past INT_MAX is refused on every
  // rank before anything moves.
  const auto lengths = allgather(static_cast<std::int64_t>(mine.size()), comm);
  std::int64_t total = 0;
  for (const std::int64_t n : lengths) total += n;
  if (total > std::numeric_limits<int>::max()) {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            "gathering " + std::to_string(total) +
                                " bytes of text on one process: MPI counts stop at 2 GiB");
  }
  std::vector<int> counts(lengths.begin(), lengths.end());
  std::vector<int> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::string joined(rank == root ? static_cast<std::size_t>(offsets.back()) : 0, '\0');
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Igatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, joined.data(),
                         counts.data(), offsets.data(), MPI_CHAR, root, comm, &req),
            "MPI_Igatherv");
  wait_all(1, &req, "MPI_Igatherv", false);
  std::vector<std::string> all;
  if (rank != root) return all;
  all.resize(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < all.size(); ++r) {
    all[r] =
        joined.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(counts[r]));
  }
  return all;
}

}  // namespace hit
