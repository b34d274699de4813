#pragma once
// Agreeing on failure before the next collective step (docs/architecture.md): a failure on one
// rank becomes the same hit::Error on every rank, so no rank is left waiting in a collective that
// never comes.

#include <mpi.h>

#include <exception>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hit/core/error.hpp"

namespace hit {

// Collective over `comm`. If any rank passes a non-null `failure`, every rank throws the Error of
// the lowest failing rank (its kind and message, prefixed with that rank when size > 1).
void agree(MPI_Comm comm, const std::exception_ptr& failure);

// Runs `fn` on every rank of `comm` and agrees on its outcome: returns only if it succeeded on all.
template <class F>
void collectively(MPI_Comm comm, F&& fn) {
  std::exception_ptr failure;
  try {
    std::forward<F>(fn)();
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
}

// Throws Error(mpi) naming `what` when an MPI call did not return MPI_SUCCESS.
void check_mpi(int code, const char* what);
// The MPI library's message for an error code, on one line (MPICH's call stack left out).
std::string mpi_error_text(int code);

// Completes `count` requests while watching for failures other processes announce
// (Environment::announce_failure): when one arrives, the receives still pending are cancelled and
// its Error is thrown, instead of waiting forever for a process that has left. Every wait of the
// library goes through here. Without an Environment it is MPI_Waitall.
// `point_to_point`: the requests are sends and receives, which may be cancelled; the request of
// a nonblocking collective may not be, and is left behind.
void wait_all(int count, MPI_Request* requests, const char* what, bool point_to_point = true);
// A barrier and a reduction that wait the same way.
void barrier(MPI_Comm comm);
void allreduce_in_place(void* data, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
// MPI_Allgather that waits the same way: with more processes than cores, a busy-polling one keeps
// a process that has not arrived yet off its core for a scheduler time slice (milliseconds).
void allgather(const void* send, int count, MPI_Datatype type, void* recv, MPI_Comm comm);
void broadcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm comm);

// Typed collectives over plain values: every rank's `mine`, in rank order. `T` is any trivially
// copyable type (a number, a struct of numbers); its bytes travel as they are, so the ranks must
// agree on its layout (one build, as every program of a run is).
template <class T>
std::vector<T> allgather(const T& mine, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<T>, "allgather<T>: T must be trivially copyable");
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<T> all(static_cast<std::size_t>(size));
  allgather(&mine, static_cast<int>(sizeof(T)), MPI_BYTE, all.data(), comm);
  return all;
}
// Every rank's string, in rank order.
std::vector<std::string> allgather(const std::string& mine, MPI_Comm comm);
// Every process's text on `root` (in rank order; empty elsewhere). Error(invalid_argument) on
// every rank when the texts together pass 2 GiB.
std::vector<std::string> gather(const std::string& mine, int root, MPI_Comm comm);

// `value` of rank `root` on every rank.
template <class T>
void broadcast(T& value, int root, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<T>, "broadcast<T>: T must be trivially copyable");
  broadcast(&value, static_cast<int>(sizeof(T)), MPI_BYTE, root, comm);
}
// Rank `root`'s values (any count) on every rank: the others' vectors are resized to match.
template <class T>
void broadcast(std::vector<T>& values, int root, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<T>, "broadcast<T>: T must be trivially copyable");
  auto count = static_cast<long long>(values.size());
  broadcast(count, root, comm);
  values.resize(static_cast<std::size_t>(count));
  broadcast(values.data(), static_cast<int>(count * static_cast<long long>(sizeof(T))), MPI_BYTE,
            root, comm);
}
void broadcast(std::string& text, int root, MPI_Comm comm);

}  // namespace hit
