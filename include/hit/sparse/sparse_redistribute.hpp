#pragma once
// Moving a sparse matrix and its vectors between two sparse layouts (docs/sparse.md,
// "Communication"): what a rebalance does once the rows have new owners.
//
// Both functions are collective over `comm` and take the new owner of every global row (what
// SparseLayout::owners() gives); each process passes what it holds now, in any distribution
// (each row, or vertex value, held by one process), and receives what the new owners give it.
// Messages go by MPI_Alltoallv; where a process's counts or displacements pass 2^31 - 1 elements
// (an int), every process uses the large-count MPI_Alltoallv_c of MPI 4 instead (an MPI without
// it makes that an Error). Every check is agreed: a bad input is the same Error on every process.

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include "hit/sparse/csr_rows.hpp"

namespace hit {

namespace detail {

// The type-free cores (src/sparse/sparse_redistribute.cpp). `allocate(n)` gives room for the
// n values received (n * element_size bytes); element_size 0: the structure alone.
CsrPattern redistribute_rows(const CsrPattern& mine, const void* values, std::size_t value_count,
                             std::size_t element_size, std::span<const std::int32_t> new_owners,
                             MPI_Comm comm, const std::function<void*(std::size_t)>& allocate);
void redistribute_values(std::span<const index_t> my_names, const void* my_values,
                         std::size_t my_count, std::size_t element_size,
                         std::span<const std::int32_t> new_owners,
                         std::span<const index_t> new_names, void* out, MPI_Comm comm);

// MPI_Alltoallv of elements of `type` (counts per process, in elements; displacements follow
// the counts). Collective: when any process's counts or displacements pass `int_limit`, all use
// MPI_Alltoallv_c. `int_limit` is INT_MAX but for tests of the large-count path.
void alltoallv(const void* send, std::span<const index_t> send_counts, void* receive,
               std::span<const index_t> receive_counts, MPI_Datatype type, MPI_Comm comm,
               index_t int_limit = INT_MAX);

}  // namespace detail

// The rows of `mine` at their new owners: each process receives the rows new_owners gives it,
// sorted by global name, with their values. new_owners has one entry per global row.
// Error(invalid_argument) for malformed rows, owners of the wrong size or outside the
// processes, extents that differ between processes, or a row held by two processes.
template <class T>
[[nodiscard]] CsrRows<T> redistribute(const CsrRows<T>& mine,
                                      std::span<const std::int32_t> new_owners, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<T>, "redistribute: trivially copyable values");
  CsrRows<T> out;
  static_cast<CsrPattern&>(out) =
      detail::redistribute_rows(mine, mine.values.data(), mine.values.size(), sizeof(T), new_owners,
                                comm, [&](std::size_t n) -> void* {
                                  out.values.resize(n);
                                  return out.values.data();
                                });
  return out;
}
// The structure alone.
[[nodiscard]] inline CsrPattern redistribute(const CsrPattern& mine,
                                             std::span<const std::int32_t> new_owners,
                                             MPI_Comm comm) {
  return detail::redistribute_rows(mine, nullptr, mine.cols.size(), 0, new_owners, comm,
                                   [](std::size_t) -> void* { return nullptr; });
}

// Values of vertices (a vector of CG, say) at their new owners: this process gives the values
// `my_values` of the vertices `my_names` (each vertex given by at most one process: its own
// rows, not its ghosts) and receives the values of `new_names`, in that order. new_names are
// exactly the vertices new_owners gives this process, in the order it holds them (its new
// shape's own rows); ghosts are filled afterwards by the new layout's SparseHalo.
// Error(invalid_argument) for sizes that disagree, a vertex given twice or by nobody, or a
// new name this process does not own.
template <class T>
[[nodiscard]] std::vector<T> redistribute_values(std::span<const index_t> my_names,
                                                 std::span<const T> my_values,
                                                 std::span<const std::int32_t> new_owners,
                                                 std::span<const index_t> new_names,
                                                 MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<T>, "redistribute_values: trivially copyable values");
  std::vector<T> out(new_names.size());
  detail::redistribute_values(my_names, my_values.data(), my_values.size(), sizeof(T), new_owners,
                              new_names, out.data(), comm);
  return out;
}

}  // namespace hit
