// Redistribution of sparse rows and vertex values between layouts: group by new owner, one
// count exchange, then one all-to-all-v per array (docs/sparse.md, "Communication").
#include "hit/sparse/sparse_redistribute.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "hit/comm/detail/comm_plan.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "sparse/sparse_halo_plan.hpp"

namespace hit::detail {

namespace {

struct Run {
  int procs = 1;
  int me = 0;
  explicit Run(MPI_Comm comm) {
    MPI_Comm_size(comm, &procs);
    MPI_Comm_rank(comm, &me);
  }
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(procs); }
};

// Per-process counts exchanged: what each process receives from every other.
std::vector<index_t> exchange_counts(const std::vector<index_t>& send, int per_process,
                                     MPI_Comm comm) {
  std::vector<index_t> receive(send.size());
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ialltoall(send.data(), per_process, MPI_INT64_T, receive.data(), per_process,
                          MPI_INT64_T, comm, &req),
            "MPI_Ialltoall");
  wait_all(1, &req, "MPI_Ialltoall", false);
  return receive;
}

// Positions 0..n-1 grouped by destination, each group in the original order (a counting sort),
// and where each destination's group starts.
std::vector<index_t> group_by(const std::vector<int>& dest, std::size_t procs,
                              std::vector<index_t>& starts) {
  starts.assign(procs + 1, 0);
  for (const int d : dest) ++starts[static_cast<std::size_t>(d) + 1];
  std::partial_sum(starts.begin(), starts.end(), starts.begin());
  std::vector<index_t> next(starts.begin(), starts.end() - 1);
  std::vector<index_t> order(dest.size());
  for (std::size_t i = 0; i < dest.size(); ++i) {
    order[static_cast<std::size_t>(next[static_cast<std::size_t>(dest[i])]++)] =
        static_cast<index_t>(i);
  }
  return order;
}

// The same global extents on every process that holds rows; returns them (the largest).
std::pair<index_t, index_t> agreed_extents(const CsrPattern& mine, MPI_Comm comm) {
  const std::array<index_t, 3> own{mine.global_rows, mine.global_cols, mine.rows()};
  const auto all = allgather(own, comm);
  index_t rows = 0;
  index_t cols = 0;
  for (const auto& a : all) {
    rows = std::max(rows, a[0]);
    cols = std::max(cols, a[1]);
  }
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p][2] > 0 && (all[p][0] != rows || all[p][1] != cols)) {
      throw Error::everywhere(ErrorKind::invalid_argument,
                              "redistribute: rank " + std::to_string(p) + " holds rows of a " +
                                  std::to_string(all[p][0]) + " x " + std::to_string(all[p][1]) +
                                  " matrix, another rank of a " + std::to_string(rows) + " x " +
                                  std::to_string(cols) + " one");
    }
  }
  return {rows, cols};
}

void check_owner(std::int32_t owner, index_t vertex, int procs, const char* what) {
  if (owner < 0 || owner >= procs) {
    throw Error(ErrorKind::invalid_argument, std::string(what) + ": vertex " +
                                                 std::to_string(vertex) + " has new owner " +
                                                 std::to_string(owner) + ", outside the " +
                                                 std::to_string(procs) + " processes");
  }
}

// The received rows (names, lengths, columns, values) sorted by name into a pattern.
CsrPattern sorted_rows(const std::vector<index_t>& names, const std::vector<index_t>& lengths,
                       const std::vector<index_t>& cols, const std::byte* values,
                       std::size_t element_size, std::byte* out_values, MPI_Comm comm) {
  std::vector<index_t> starts(names.size() + 1, 0);
  for (std::size_t i = 0; i < names.size(); ++i) {
    starts[i + 1] = checked_add(starts[i], lengths[i], "redistribute nonzeros");
  }
  std::vector<index_t> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](index_t a, index_t b) {
    return names[static_cast<std::size_t>(a)] < names[static_cast<std::size_t>(b)];
  });
  collectively(comm, [&] {
    for (std::size_t k = 1; k < order.size(); ++k) {
      const index_t g = names[static_cast<std::size_t>(order[k])];
      if (g == names[static_cast<std::size_t>(order[k - 1])]) {
        throw Error(ErrorKind::invalid_argument,
                    "redistribute: row " + std::to_string(g) + " is held by two processes");
      }
    }
  });
  CsrPattern out;
  out.names.reserve(names.size());
  out.cols.reserve(cols.size());
  for (const index_t i : order) {
    const auto u = static_cast<std::size_t>(i);
    out.names.push_back(names[u]);
    const auto b = static_cast<std::size_t>(starts[u]);
    const auto e = static_cast<std::size_t>(starts[u + 1]);
    if (element_size > 0 && e > b) {
      std::memcpy(out_values + out.cols.size() * element_size, values + b * element_size,
                  (e - b) * element_size);
    }
    out.cols.insert(out.cols.end(), cols.begin() + static_cast<std::ptrdiff_t>(b),
                    cols.begin() + static_cast<std::ptrdiff_t>(e));
    out.row_ptr.push_back(static_cast<index_t>(out.cols.size()));
  }
  return out;
}

}  // namespace

void alltoallv(const void* send, std::span<const index_t> send_counts, void* receive,
               std::span<const index_t> receive_counts, MPI_Datatype type, MPI_Comm comm,
               index_t int_limit) {
  const std::size_t n = send_counts.size();
  std::vector<index_t> sd(n + 1, 0);
  std::vector<index_t> rd(n + 1, 0);
  for (std::size_t p = 0; p < n; ++p) {
    sd[p + 1] = checked_add(sd[p], send_counts[p], "all-to-all-v elements");
    rd[p + 1] = checked_add(rd[p], receive_counts[p], "all-to-all-v elements");
  }
  // Every count and displacement fits an int when the totals do (counts are not negative).
  index_t largest = std::max(sd[n], rd[n]);
  allreduce_in_place(&largest, 1, MPI_INT64_T, MPI_MAX, comm);
  MPI_Request req = MPI_REQUEST_NULL;
  if (largest <= int_limit) {
    auto ints = [](std::span<const index_t> v) { return std::vector<int>(v.begin(), v.end()); };
    const std::vector<int> sc = ints(send_counts);
    const std::vector<int> rc = ints(receive_counts);
    const std::vector<int> sdi = ints(std::span(sd).first(n));
    const std::vector<int> rdi = ints(std::span(rd).first(n));
    check_mpi(MPI_Ialltoallv(send, sc.data(), sdi.data(), type, receive, rc.data(), rdi.data(),
                             type, comm, &req),
              "MPI_Ialltoallv");
    wait_all(1, &req, "MPI_Ialltoallv", false);
    return;
  }
#if MPI_VERSION >= 4
  const std::vector<MPI_Count> sc(send_counts.begin(), send_counts.end());
  const std::vector<MPI_Count> rc(receive_counts.begin(), receive_counts.end());
  const std::vector<MPI_Aint> sdi(sd.begin(), sd.end() - 1);
  const std::vector<MPI_Aint> rdi(rd.begin(), rd.end() - 1);
  check_mpi(MPI_Ialltoallv_c(send, sc.data(), sdi.data(), type, receive, rc.data(), rdi.data(),
                             type, comm, &req),
            "MPI_Ialltoallv_c");
  wait_all(1, &req, "MPI_Ialltoallv_c", false);
#else
  throw Error::everywhere(ErrorKind::invalid_argument,
                          "redistribute: " + std::to_string(largest) +
                              " elements for one process pass an MPI count, and this MPI has "
                              "no large-count all-to-all (MPI 4); use more processes");
#endif
}

CsrPattern redistribute_rows(const CsrPattern& mine, const void* values, std::size_t value_count,
                             std::size_t element_size, std::span<const std::int32_t> new_owners,
                             MPI_Comm comm, const std::function<void*(std::size_t)>& allocate) {
  const Run run(comm);
  collectively(comm, [&] {
    mine.check("redistribute");
    if (value_count != mine.cols.size()) {
      throw Error(ErrorKind::invalid_argument,
                  "redistribute: " + std::to_string(value_count) + " values for " +
                      std::to_string(mine.cols.size()) + " column indices");
    }
  });
  const auto [global_rows, global_cols] = agreed_extents(mine, comm);
  check_owner_sizes(new_owners, global_rows, comm, "redistribute");
  const auto n = static_cast<std::size_t>(mine.rows());
  std::vector<int> dest(n);
  collectively(comm, [&] {
    for (std::size_t r = 0; r < n; ++r) {
      dest[r] = new_owners[static_cast<std::size_t>(mine.names[r])];
      check_owner(dest[r], mine.names[r], run.procs, "redistribute");
    }
  });
  std::vector<index_t> starts;
  const std::vector<index_t> order = group_by(dest, run.size(), starts);
  // Rows and nonzeros for each process, and the arrays in that order.
  std::vector<index_t> counts(2 * run.size(), 0);
  std::vector<index_t> names, lengths, cols;
  std::vector<std::byte> bytes(static_cast<std::size_t>(
      checked_mul(static_cast<index_t>(value_count), static_cast<index_t>(element_size),
                  "redistribute value bytes")));
  names.reserve(n);
  lengths.reserve(n);
  cols.reserve(mine.cols.size());
  for (const index_t r : order) {
    const auto u = static_cast<std::size_t>(r);
    const std::span<const index_t> c = mine.columns(r);
    counts[2 * static_cast<std::size_t>(dest[u])] += 1;
    counts[2 * static_cast<std::size_t>(dest[u]) + 1] += static_cast<index_t>(c.size());
    if (element_size > 0 && !c.empty()) {
      std::memcpy(bytes.data() + cols.size() * element_size,
                  static_cast<const std::byte*>(values) +
                      static_cast<std::size_t>(mine.row_ptr[u]) * element_size,
                  c.size() * element_size);
    }
    names.push_back(mine.names[u]);
    lengths.push_back(static_cast<index_t>(c.size()));
    cols.insert(cols.end(), c.begin(), c.end());
  }
  const std::vector<index_t> got = exchange_counts(counts, 2, comm);
  std::vector<index_t> row_send(run.size()), row_recv(run.size());
  std::vector<index_t> nnz_send(run.size()), nnz_recv(run.size());
  index_t rows_in = 0;
  index_t nnz_in = 0;
  for (std::size_t p = 0; p < run.size(); ++p) {
    row_send[p] = counts[2 * p];
    nnz_send[p] = counts[2 * p + 1];
    row_recv[p] = got[2 * p];
    nnz_recv[p] = got[2 * p + 1];
    rows_in = checked_add(rows_in, row_recv[p], "redistribute rows");
    nnz_in = checked_add(nnz_in, nnz_recv[p], "redistribute nonzeros");
  }
  std::vector<index_t> in_names(static_cast<std::size_t>(rows_in));
  std::vector<index_t> in_lengths(static_cast<std::size_t>(rows_in));
  std::vector<index_t> in_cols(static_cast<std::size_t>(nnz_in));
  alltoallv(names.data(), row_send, in_names.data(), row_recv, MPI_INT64_T, comm);
  alltoallv(lengths.data(), row_send, in_lengths.data(), row_recv, MPI_INT64_T, comm);
  alltoallv(cols.data(), nnz_send, in_cols.data(), nnz_recv, MPI_INT64_T, comm);
  std::vector<std::byte> in_bytes(static_cast<std::size_t>(nnz_in) * element_size);
  if (element_size > 0) {
    const Datatype type = bytes_type(element_size);
    alltoallv(bytes.data(), nnz_send, in_bytes.data(), nnz_recv, type.get(), comm);
  }
  auto* out_values = static_cast<std::byte*>(allocate(static_cast<std::size_t>(nnz_in)));
  CsrPattern out =
      sorted_rows(in_names, in_lengths, in_cols, in_bytes.data(), element_size, out_values, comm);
  out.global_rows = global_rows;
  out.global_cols = global_cols;
  return out;
}

namespace {

// Where each of `new_names` sits, by name; Error for a name twice or one `me` does not own.
std::vector<std::pair<index_t, index_t>> positions_of(std::span<const index_t> new_names,
                                                      std::span<const std::int32_t> new_owners,
                                                      int me) {
  std::vector<std::pair<index_t, index_t>> by_name(new_names.size());
  const auto n = static_cast<index_t>(new_owners.size());
  for (std::size_t i = 0; i < new_names.size(); ++i) {
    const index_t g = new_names[i];
    if (g < 0 || g >= n) {
      throw Error(ErrorKind::invalid_argument, "redistribute_values: new name " +
                                                   std::to_string(g) + " outside the " +
                                                   std::to_string(n) + " vertices");
    }
    if (new_owners[static_cast<std::size_t>(g)] != me) {
      throw Error(ErrorKind::invalid_argument,
                  "redistribute_values: rank " + std::to_string(me) + " lists vertex " +
                      std::to_string(g) + " among its new names, but its new owner is " +
                      std::to_string(new_owners[static_cast<std::size_t>(g)]));
    }
    by_name[i] = {g, static_cast<index_t>(i)};
  }
  std::sort(by_name.begin(), by_name.end());
  for (std::size_t k = 1; k < by_name.size(); ++k) {
    if (by_name[k].first == by_name[k - 1].first) {
      throw Error(ErrorKind::invalid_argument, "redistribute_values: vertex " +
                                                   std::to_string(by_name[k].first) +
                                                   " is listed twice among the new names");
    }
  }
  return by_name;
}

}  // namespace

void redistribute_values(std::span<const index_t> my_names, const void* my_values,
                         std::size_t my_count, std::size_t element_size,
                         std::span<const std::int32_t> new_owners,
                         std::span<const index_t> new_names, void* out, MPI_Comm comm) {
  const Run run(comm);
  check_owner_sizes(new_owners, -1, comm, "redistribute_values");
  const auto n = static_cast<index_t>(new_owners.size());
  std::vector<int> dest(my_names.size());
  std::vector<std::pair<index_t, index_t>> by_name;
  collectively(comm, [&] {
    if (my_count != my_names.size()) {
      throw Error(ErrorKind::invalid_argument, "redistribute_values: " + std::to_string(my_count) +
                                                   " values for " +
                                                   std::to_string(my_names.size()) + " names");
    }
    for (std::size_t i = 0; i < my_names.size(); ++i) {
      const index_t g = my_names[i];
      if (g < 0 || g >= n) {
        throw Error(ErrorKind::invalid_argument,
                    "redistribute_values: vertex " + std::to_string(g) + " outside the " +
                        std::to_string(n) + " vertices of the new owners");
      }
      dest[i] = new_owners[static_cast<std::size_t>(g)];
      check_owner(dest[i], g, run.procs, "redistribute_values");
    }
    by_name = positions_of(new_names, new_owners, run.me);
  });
  std::vector<index_t> starts;
  const std::vector<index_t> order = group_by(dest, run.size(), starts);
  std::vector<index_t> names(my_names.size());
  std::vector<std::byte> bytes(my_names.size() * element_size);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto i = static_cast<std::size_t>(order[k]);
    names[k] = my_names[i];
    std::memcpy(bytes.data() + k * element_size,
                static_cast<const std::byte*>(my_values) + i * element_size, element_size);
  }
  std::vector<index_t> send_counts(run.size());
  for (std::size_t p = 0; p < run.size(); ++p) send_counts[p] = starts[p + 1] - starts[p];
  const std::vector<index_t> receive_counts = exchange_counts(send_counts, 1, comm);
  const index_t total = std::accumulate(receive_counts.begin(), receive_counts.end(), index_t{0});
  std::vector<index_t> in_names(static_cast<std::size_t>(total));
  std::vector<std::byte> in_bytes(static_cast<std::size_t>(total) * element_size);
  alltoallv(names.data(), send_counts, in_names.data(), receive_counts, MPI_INT64_T, comm);
  const Datatype type = bytes_type(element_size);
  alltoallv(bytes.data(), send_counts, in_bytes.data(), receive_counts, type.get(), comm);
  collectively(comm, [&] {
    std::vector<char> placed(new_names.size(), 0);
    for (std::size_t k = 0; k < in_names.size(); ++k) {
      const index_t g = in_names[k];
      const auto it = std::lower_bound(by_name.begin(), by_name.end(), std::pair{g, index_t{-1}});
      if (it == by_name.end() || it->first != g) {
        throw Error(ErrorKind::invalid_argument,
                    "redistribute_values: vertex " + std::to_string(g) + " arrives at rank " +
                        std::to_string(run.me) + ", whose new names do not list it");
      }
      const auto at = static_cast<std::size_t>(it->second);
      if (placed[at] != 0) {
        throw Error(
            ErrorKind::invalid_argument,
            "redistribute_values: vertex " + std::to_string(g) + " is given by two processes");
      }
      placed[at] = 1;
      std::memcpy(static_cast<std::byte*>(out) + at * element_size,
                  in_bytes.data() + k * element_size, element_size);
    }
    const auto missing = std::find(placed.begin(), placed.end(), 0);
    if (missing != placed.end()) {
      throw Error(
          ErrorKind::invalid_argument,
          "redistribute_values: no process gives vertex " +
              std::to_string(new_names[static_cast<std::size_t>(missing - placed.begin())]));
    }
  });
}

}  // namespace hit::detail
