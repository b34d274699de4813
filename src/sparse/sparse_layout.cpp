// The SparseLayout value (owners, the rows of every process, quality figures measured on the
// graph) and hit::sparse_layout(), which resolves the spec as hit::layout() does
// (layouts/layout_choice.hpp), runs the plug-in collectively and measures what it made.
#include "hit/sparse/sparse_layout.hpp"

#include <algorithm>
#include <climits>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/program_trace.hpp"
#include "layouts/layout_choice.hpp"

namespace hit {

// ---- the value --------------------------------------------------------------------------------

SparseLayout::SparseLayout(Topology topology, std::string spec, std::vector<std::int32_t> owner,
                           std::vector<double> predicted_time)
    : topology_(std::move(topology)),
      spec_(std::move(spec)),
      owner_(std::move(owner)),
      predicted_(std::move(predicted_time)) {
  const int procs = topology_.procs();
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::plugin, "sparse layout '" + spec_ + "': " + why);
  };
  if (!predicted_.empty() && predicted_.size() != static_cast<std::size_t>(procs)) {
    throw fail(std::to_string(predicted_.size()) + " predicted times for " + std::to_string(procs) +
               " processes");
  }
  // The rows of every process, by a counting sort of the owners: a pass in row order keeps each
  // process's rows ascending.
  first_.assign(static_cast<std::size_t>(procs) + 1, 0);
  for (std::size_t r = 0; r < owner_.size(); ++r) {
    const std::int32_t p = owner_[r];
    if (p < 0 || p >= procs) {
      throw fail("row " + std::to_string(r) + " is given to process " + std::to_string(p) +
                 ", not one of the " + std::to_string(procs) + " processes");
    }
    ++first_[static_cast<std::size_t>(p) + 1];
  }
  for (std::size_t p = 0; p < static_cast<std::size_t>(procs); ++p) first_[p + 1] += first_[p];
  by_proc_.resize(owner_.size());
  std::vector<index_t> next(first_.begin(), first_.end() - 1);
  for (std::size_t r = 0; r < owner_.size(); ++r) {
    by_proc_[static_cast<std::size_t>(next[static_cast<std::size_t>(owner_[r])]++)] =
        static_cast<index_t>(r);
  }
}

std::span<const index_t> SparseLayout::rows_of(int proc) const {
  const index_t n = row_count(proc);
  return std::span<const index_t>(by_proc_).subspan(
      static_cast<std::size_t>(first_[static_cast<std::size_t>(proc)]),
      static_cast<std::size_t>(n));
}

index_t SparseLayout::row_count(int proc) const {
  require(proc >= 0 && proc < procs(), ErrorKind::invalid_argument, [&] {
    return "sparse layout '" + spec_ + "': process " + std::to_string(proc) +
           " is not one of its " + std::to_string(procs()) + " processes";
  });
  const auto p = static_cast<std::size_t>(proc);
  return first_[p + 1] - first_[p];
}

int SparseLayout::active_count() const noexcept {
  int n = 0;
  for (std::size_t p = 0; p + 1 < first_.size(); ++p) n += first_[p + 1] > first_[p] ? 1 : 0;
  return n;
}

int SparseLayout::self() const {
  return self_ >= 0 ? self_ : Environment::current().rank();
}

std::span<const index_t> SparseLayout::local_rows() const {
  const int me = self();
  if (me >= procs()) return {};
  return rows_of(me);
}

double SparseLayout::imbalance() const {
  double most = 0;
  double sum = 0;
  int active = 0;
  for (int p = 0; p < procs(); ++p) {
    const auto at = static_cast<std::size_t>(p);
    const double work = stats_.empty() ? static_cast<double>(row_count(p))
                                       : static_cast<double>(stats_[at].rows + stats_[at].nonzeros);
    if (row_count(p) == 0) continue;
    most = std::max(most, work);
    sum += work;
    ++active;
  }
  return active == 0 || sum == 0 ? 1.0 : most / (sum / active);
}

// ---- measuring ----------------------------------------------------------------------------------

namespace {

// Sends out[d] to rank d of `comm` and returns what every rank sent here, in rank order.
std::vector<index_t> send_to_ranks(const std::vector<std::vector<index_t>>& out, MPI_Comm comm) {
  const auto size = out.size();
  std::vector<int> send_counts(size);
  std::vector<int> send_offsets(size + 1, 0);
  for (std::size_t d = 0; d < size; ++d) {
    require(out[d].size() <= static_cast<std::size_t>(INT_MAX - send_offsets[d]),
            ErrorKind::invalid_argument,
            "sparse layout measure: more than 2^31 values to send from one process");
    send_counts[d] = static_cast<int>(out[d].size());
    send_offsets[d + 1] = send_offsets[d] + send_counts[d];
  }
  std::vector<index_t> flat;
  flat.reserve(static_cast<std::size_t>(send_offsets[size]));
  for (const auto& v : out) flat.insert(flat.end(), v.begin(), v.end());
  std::vector<int> recv_counts(size);
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Ialltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm, &req),
      "MPI_Ialltoall");
  wait_all(1, &req, "MPI_Ialltoall", false);
  std::vector<int> recv_offsets(size + 1, 0);
  index_t total = 0;
  for (std::size_t s = 0; s < size; ++s) {
    total += recv_counts[s];
    require(total <= INT_MAX, ErrorKind::invalid_argument,
            "sparse layout measure: more than 2^31 values to receive on one process");
    recv_offsets[s + 1] = static_cast<int>(total);
  }
  std::vector<index_t> in(static_cast<std::size_t>(total));
  check_mpi(
      MPI_Ialltoallv(flat.data(), send_counts.data(), send_offsets.data(), MPI_INT64_T, in.data(),
                     recv_counts.data(), recv_offsets.data(), MPI_INT64_T, comm, &req),
      "MPI_Ialltoallv");
  wait_all(1, &req, "MPI_Ialltoallv", false);
  return in;
}

// Sorted pairs (a, b) with duplicates removed, as a flat list a0 b0 a1 b1 ...
void unique_pairs(std::vector<index_t>& flat) {
  std::vector<std::pair<index_t, index_t>> pairs(flat.size() / 2);
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {flat[2 * i], flat[2 * i + 1]};
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  flat.clear();
  for (const auto& [a, b] : pairs) {
    flat.push_back(a);
    flat.push_back(b);
  }
}

}  // namespace

void SparseLayout::measure(const CsrPattern& mine, MPI_Comm comm) {
  collectively(comm, [&] {
    mine.check("sparse layout '" + spec_ + "': the graph measured");
    require(mine.global_rows == rows() && mine.global_cols == rows(), ErrorKind::invalid_argument,
            "sparse layout '" + spec_ + "' of " + std::to_string(rows()) +
                " rows measured on a graph of " + std::to_string(mine.global_rows) + " x " +
                std::to_string(mine.global_cols));
  });
  int size = 1;
  MPI_Comm_size(comm, &size);
  const auto P = static_cast<std::size_t>(procs());
  // Totals over every process: nonzeros, ghosts and values sent per process, and the cut.
  std::vector<index_t> totals(3 * P + 1, 0);
  // A ghost is a distinct pair (process o, column c) with c owned elsewhere; a cut edge a distinct
  // pair {r, c}. Duplicates may come from different holders, so each pair goes to one rank that
  // counts it once: (o, c) to rank o mod size, {a < b} to rank a mod size.
  std::vector<std::vector<index_t>> ghosts(static_cast<std::size_t>(size));
  std::vector<std::vector<index_t>> cuts(static_cast<std::size_t>(size));
  for (index_t i = 0; i < mine.rows(); ++i) {
    const index_t r = mine.names[static_cast<std::size_t>(i)];
    const int o = owner(r);
    const auto cols = mine.columns(i);
    totals[static_cast<std::size_t>(o)] += static_cast<index_t>(cols.size());
    for (const index_t c : cols) {
      if (owner(c) == o) continue;
      auto& g = ghosts[static_cast<std::size_t>(o % size)];
      g.push_back(o);
      g.push_back(c);
      auto& e = cuts[static_cast<std::size_t>(std::min(r, c) % size)];
      e.push_back(std::min(r, c));
      e.push_back(std::max(r, c));
    }
  }
  for (auto* lists : {&ghosts, &cuts}) {
    for (auto& v : *lists) unique_pairs(v);  // less to send
  }
  std::vector<index_t> got = send_to_ranks(ghosts, comm);
  unique_pairs(got);
  for (std::size_t k = 0; k < got.size(); k += 2) {
    ++totals[P + static_cast<std::size_t>(got[k])];
    ++totals[2 * P + static_cast<std::size_t>(owner(got[k + 1]))];
  }
  got = send_to_ranks(cuts, comm);
  unique_pairs(got);
  totals[3 * P] = static_cast<index_t>(got.size() / 2);
  require(totals.size() <= INT_MAX, ErrorKind::invalid_argument,
          "sparse layout measure: too many processes");
  allreduce_in_place(totals.data(), static_cast<int>(totals.size()), MPI_INT64_T, MPI_SUM, comm);
  stats_.assign(P, SparsePartStats{});
  for (std::size_t p = 0; p < P; ++p) {
    stats_[p] = {row_count(static_cast<int>(p)), totals[p], totals[P + p], totals[2 * P + p]};
  }
  edge_cut_ = totals[3 * P];
}

// ---- the registry and the by-name entry point ------------------------------------------------

SparseLayoutRegistry::SparseLayoutRegistry(Environment& /*env*/)
    : Registry<SparseLayoutPlugin>("sparse layout") {
  detail::register_builtin_sparse_layouts(*this);
}

namespace {

// Throws, on every process alike, unless the graph is square and its rows, over all processes,
// are each held once (a count: a row held twice and another missing is found by the plug-ins
// that gather the rows, METIS's, or goes unnoticed by `rows`, which needs only the lengths).
void check_graph(const CsrPattern& mine, const std::string& spec, MPI_Comm comm) {
  const std::string what = "sparse layout '" + spec + "'";
  collectively(comm, [&] { mine.check(what + ": the graph"); });
  struct Extents {
    index_t rows = 0;
    index_t cols = 0;
    index_t held = 0;
  };
  const auto all = allgather(Extents{mine.global_rows, mine.global_cols, mine.rows()}, comm);
  index_t held = 0;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].rows != all[0].rows || all[p].cols != all[0].cols) {
      throw Error(ErrorKind::invalid_argument,
                  what + ": the processes disagree on the graph's extents (rank 0: " +
                      std::to_string(all[0].rows) + " x " + std::to_string(all[0].cols) +
                      ", rank " + std::to_string(p) + ": " + std::to_string(all[p].rows) + " x " +
                      std::to_string(all[p].cols) + ")");
    }
    held = checked_add(held, all[p].held, "the rows held");
  }
  if (all[0].rows != all[0].cols) {
    throw Error(ErrorKind::invalid_argument,
                what + " needs a square graph (row r and column r the same vertex), got " +
                    std::to_string(all[0].rows) + " x " + std::to_string(all[0].cols));
  }
  if (held != all[0].rows) {
    throw Error(ErrorKind::invalid_argument,
                what + ": the processes hold " + std::to_string(held) + " rows of a graph of " +
                    std::to_string(all[0].rows) + " (each row must be held by one process)");
  }
}

}  // namespace

SparseLayout sparse_layout(const Spec& spec, const Topology& topo, const CsrPattern& mine,
                           const SparseLayoutOptions& options) {
  Environment& env = Environment::current();
  const MPI_Comm comm = env.comm();
  const SparseLayoutPlugin* plugin = nullptr;
  collectively(comm, [&] {
    plugin = &env.extension<SparseLayoutRegistry>().get(spec);
    require(topo.procs() >= 1, ErrorKind::topology,
            "sparse layout '" + spec.str() + "' needs a topology, got none");
  });
  detail::LayoutBinding binding =
      detail::layout_binding(env, spec.str(), topo.procs(), options.devices);
  check_graph(mine, spec.str(), comm);
  const SparseLayoutRequest request{topo, spec,      &mine, std::move(binding.devices),
                                    comm, env.rank()};
  SparseLayout result;
  collectively(comm, [&] { result = plugin->make(request); });
  if (result.rows() != mine.global_rows || !(result.topology() == topo)) {
    throw Error(ErrorKind::plugin,
                "sparse layout plug-in '" + spec.name() + "' returned " +
                    std::to_string(result.rows()) + " rows over " + result.topology().str() +
                    " for " + std::to_string(mine.global_rows) + " rows over " + topo.str());
  }
  result.self_ = env.rank();
  result.spec_value_ = result.spec_ == spec.str() ? spec : Spec::parse(result.spec_);
  result.measure(mine, comm);
  return result;
}

namespace {

// A dry run's record of the matrix laid out: its rows, nonzeros and a digest of the owners (two
// candidates that own every row alike are one).
void trace_array(ProgramTrace& trace, const Setting& chosen, const SparseLayout& l) {
  TracedArray a{chosen.name, Shape::extents({l.rows(), l.rows()}).str(), l.topology().name(),
                l.topology().dims(), l.procs()};
  a.sparse = true;
  for (const SparsePartStats& s : l.stats()) a.nonzeros += static_cast<double>(s.nonzeros);
  std::uint64_t digest = 14695981039346656037ULL;  // FNV-1a
  for (const std::int32_t o : l.owners()) {
    digest ^= static_cast<std::uint32_t>(o);
    digest *= 1099511628211ULL;
  }
  a.owners = digest;
  trace.array(std::move(a));
}

}  // namespace

SparseLayout sparse_layout(const Setting& chosen, const Topology& topo, const CsrPattern& mine,
                           const SparseLayoutOptions& options) {
  try {
    Spec spec;
    collectively(Environment::current().comm(), [&] { spec = Spec::parse(chosen.value); });
    SparseLayout result = sparse_layout(spec, topo, mine, options);
    if (ProgramTrace* trace = Environment::current().trace()) trace_array(*trace, chosen, result);
    if (chosen.overridden()) {
      result.requested_ = chosen.code;
      result.set_by_ = chosen.source;
    }
    return result;
  } catch (const Error& e) {
    if (!chosen.overridden()) throw;
    throw chosen.explain(e);
  }
}

}  // namespace hit
