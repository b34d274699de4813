#pragma once
// Gathers of the sparse programs' checks and reports: varying-length vectors on every process,
// a small matrix as a dense array on rank 0, per-process JSON objects. For checks and reports
// only: nothing here is on a solver's path.

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/sparse/csr_rows.hpp"
#include "sparse_setup.hpp"

namespace hit::app {

// Every process's `mine` one after the other, on every process; `type` is V's MPI type.
template <class V>
std::vector<V> allgather_varying(const std::vector<V>& mine, MPI_Datatype type, MPI_Comm comm) {
  const std::vector<long long> counts = allgather(static_cast<long long>(mine.size()), comm);
  std::vector<int> c(counts.size()), offsets(counts.size());
  long long total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    offsets[p] = static_cast<int>(total);
    c[p] = static_cast<int>(counts[p]);
    total = checked_add(total, counts[p], "gathered values");
  }
  if (total > std::numeric_limits<int>::max()) {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            "a check gathers " + std::to_string(total) +
                                " values on every process: more than MPI's int counts");
  }
  std::vector<V> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), type, all.data(), c.data(),
                 offsets.data(), type, comm);
  return all;
}

// The whole matrix as a dense row-major array of doubles on rank 0 (empty elsewhere).
template <class T>
std::vector<double> gather_dense(const CsrRows<T>& block, MPI_Comm comm) {
  std::vector<index_t> rows, cols;
  std::vector<double> values;
  for (index_t r = 0; r < block.rows(); ++r) {
    const auto c = block.columns(r);
    const auto v = block.row_values(r);
    for (std::size_t k = 0; k < c.size(); ++k) {
      rows.push_back(block.names[static_cast<std::size_t>(r)]);
      cols.push_back(c[k]);
      values.push_back(static_cast<double>(v[k]));
    }
  }
  const auto all_rows = gather_to_root(rows, MPI_INT64_T, comm);
  const auto all_cols = gather_to_root(cols, MPI_INT64_T, comm);
  const auto all_values = gather_to_root(values, MPI_DOUBLE, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return {};
  const index_t n = block.global_rows;
  std::vector<double> dense(static_cast<std::size_t>(checked_mul(n, n, "dense check matrix")));
  for (std::size_t k = 0; k < all_rows.size(); ++k) {
    dense[static_cast<std::size_t>(all_rows[k] * n + all_cols[k])] = all_values[k];
  }
  return dense;
}

// Every process's object, in rank order (on every process).
inline nlohmann::json allgather_json(const Environment& env, const nlohmann::json& mine) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& text : allgather(mine.dump(), env.comm())) {
    out.push_back(nlohmann::json::parse(text));
  }
  return out;
}

template <class T>
index_t total_nonzeros(const Environment& env, const SparseSystem<T>& s) {
  index_t nnz = s.shape().nonzeros();
  allreduce_in_place(&nnz, 1, MPI_INT64_T, MPI_SUM, env.comm());
  return nnz;
}

// Every process's (names, values) as one global vector on every process.
template <class T>
std::vector<double> allgather_global(Environment& env, index_t n, std::span<const index_t> names,
                                     std::span<const T> values) {
  std::vector<double> local(values.begin(), values.end());
  std::vector<index_t> my_names(names.begin(), names.end());
  const auto all_names = allgather_varying(my_names, MPI_INT64_T, env.comm());
  const auto all_values = allgather_varying(local, MPI_DOUBLE, env.comm());
  std::vector<double> out(static_cast<std::size_t>(n), 0.0);
  for (std::size_t k = 0; k < all_names.size(); ++k) {
    out[static_cast<std::size_t>(all_names[k])] = all_values[k];
  }
  return out;
}

}  // namespace hit::app
