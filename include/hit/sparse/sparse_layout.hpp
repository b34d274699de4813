#pragma once
// Layouts of sparse domains (docs/layouts.md, docs/sparse.md): which process owns each row
// (vertex) of a sparse matrix or graph, computed by a plug-in chosen by name — `rows`
// (contiguous rows by count or by nonzeros, optional weights) and `metis` (METIS k-way with
// target part weights from w=, performance models or the device binding).
//
// A SparseLayout is a value identical on every process: it keeps the owner of every global row
// and the rows of every process listed (12 bytes a row), so owner() and rows_of() need no
// communication, and the quality figures of the graph it was made for (edge cut, and per process
// rows, nonzeros, ghosts and halo volume).
//
// A layout is of a square matrix or graph: row r and column r are the same vertex r.

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/registry.hpp"
#include "hit/core/setting.hpp"
#include "hit/core/spec.hpp"
#include "hit/layouts/candidate_context.hpp"
#include "hit/shape.hpp"
#include "hit/sparse/csr_rows.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_binding.hpp"

namespace hit {

class Environment;
struct SparseLayoutOptions;

// What a layout gives each process, measured on the graph it was made for.
struct SparsePartStats {
  index_t rows = 0;
  index_t nonzeros = 0;
  index_t ghosts = 0;       // distinct vertices its rows reference that others own
  index_t send_values = 0;  // values of its own rows others need, summed over the receivers

  friend bool operator==(const SparsePartStats&, const SparsePartStats&) = default;
};

class SparseLayout {
 public:
  SparseLayout() = default;
  // `owner[r]`: the process of global row r, in [0, topology.procs()). `predicted_time`: empty
  // or one per process. Error(plugin) naming `spec` for an owner outside the processes or a
  // prediction count that is neither.
  SparseLayout(Topology topology, std::string spec, std::vector<std::int32_t> owner,
               std::vector<double> predicted_time = {});

  [[nodiscard]] const Topology& topology() const noexcept { return topology_; }
  [[nodiscard]] int procs() const noexcept { return topology_.procs(); }
  [[nodiscard]] const std::string& spec() const noexcept { return spec_; }
  // The same spec as a value, as Layout::spec_value().
  [[nodiscard]] const Spec& spec_value() const noexcept { return spec_value_; }
  // What the program's code asked for and what replaced it, as Layout::requested() and set_by().
  [[nodiscard]] const std::string& requested() const noexcept {
    return requested_.empty() ? spec_ : requested_;
  }
  [[nodiscard]] const std::string& set_by() const noexcept { return set_by_; }
  [[nodiscard]] index_t rows() const noexcept { return static_cast<index_t>(owner_.size()); }

  // The owner of global row `row`; -1 outside [0, rows()).
  [[nodiscard]] int owner(index_t row) const noexcept {
    return row < 0 || row >= rows() ? -1 : owner_[static_cast<std::size_t>(row)];
  }
  [[nodiscard]] std::span<const std::int32_t> owners() const noexcept { return owner_; }
  // The rows of `proc`, ascending (listed once, when the layout is made); Error(invalid_argument)
  // for a proc outside [0, procs()).
  [[nodiscard]] std::span<const index_t> rows_of(int proc) const;
  [[nodiscard]] index_t row_count(int proc) const;
  [[nodiscard]] bool active(int proc) const { return row_count(proc) > 0; }
  [[nodiscard]] int active_count() const noexcept;
  // The rows of the calling process: the rank of the Environment sparse_layout() ran on (else
  // Environment::current()'s); empty for a rank outside the layout's processes.
  [[nodiscard]] std::span<const index_t> local_rows() const;
  [[nodiscard]] int self() const;

  // Filled by sparse_layout() (or measure()) from the graph; empty when made directly.
  [[nodiscard]] const std::vector<SparsePartStats>& stats() const noexcept { return stats_; }
  // The edges between vertices of different processes, each undirected edge once (METIS's
  // convention): the pairs {r, c}, r != c, such that (r, c) or (c, r) is an entry and owner(r) !=
  // owner(c). A symmetric matrix's cut entries are twice this number.
  [[nodiscard]] index_t edge_cut() const noexcept { return edge_cut_; }
  // The largest work (nonzeros + rows of a process) over the mean work of the active processes;
  // rows alone before measure(). 1 is perfect balance of the work, which a weighted layout
  // departs from by design (its predicted_time, when known, says whether the times balance).
  [[nodiscard]] double imbalance() const;
  [[nodiscard]] const std::vector<double>& predicted_time() const noexcept { return predicted_; }

  // Fills stats() and edge_cut() from the graph, collectively over `comm` (every process passes
  // its rows; any distribution of the rows over the processes of `comm`, whose count need not
  // be procs()). Error(invalid_argument), agreed, when the graph is not of rows() x rows().
  void measure(const CsrPattern& mine, MPI_Comm comm);

  friend bool operator==(const SparseLayout& a, const SparseLayout& b) {
    return a.topology_ == b.topology_ && a.spec_ == b.spec_ && a.owner_ == b.owner_;
  }

 private:
  Topology topology_;
  std::string spec_;
  std::vector<std::int32_t> owner_;
  std::vector<index_t> first_;    // procs() + 1 offsets into by_proc_
  std::vector<index_t> by_proc_;  // every row, grouped by owner, ascending within a group
  std::vector<double> predicted_;
  std::vector<SparsePartStats> stats_;
  index_t edge_cut_ = 0;
  int self_ = -1;  // -1: Environment::current()'s rank
  Spec spec_value_;
  std::string requested_;
  std::string set_by_;
  friend SparseLayout sparse_layout(const Spec&, const Topology&, const CsrPattern&,
                                    const SparseLayoutOptions&);
  friend SparseLayout sparse_layout(const Setting&, const Topology&, const CsrPattern&,
                                    const SparseLayoutOptions&);
};

// What a sparse layout plug-in gets. Collective: every process calls make() with its own rows
// of the graph (any distribution, each global row held once), and make() must return the same
// layout on every process (a plug-in that computes on one process broadcasts the result). The
// request's spec has been checked against params(), and the graph (square, every row held once)
// by sparse_layout(). A failure that only some processes may see (a file, a computation on one
// process) must be agreed (hit::collectively) before the plug-in's next collective, so that no
// process waits for one that has thrown.
struct SparseLayoutRequest {
  Topology topology;
  Spec spec;
  const CsrPattern* graph = nullptr;   // this process's rows
  std::vector<DeviceBinding> devices;  // of every process; empty when unknown (homogeneous)
  MPI_Comm comm = MPI_COMM_NULL;       // the run's processes, which hold the graph
  int rank = 0;                        // this process's rank in comm
};

class SparseLayoutPlugin {
 public:
  virtual ~SparseLayoutPlugin() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<ParamInfo> params() const = 0;
  virtual SparseLayout make(const SparseLayoutRequest& request) const = 0;
  // The specs the advisor tries for this plug-in (docs/advisor.md, "Candidates"); by default its
  // name alone, every parameter at its default.
  virtual std::vector<Spec> candidates(const CandidateContext& /*context*/) const {
    return {Spec(name())};
  }
};

// The sparse layout plug-ins of a run (`rows`, `metis`, and any a program adds with
// env.extension<SparseLayoutRegistry>().add(...)), owned by the Environment.
class SparseLayoutRegistry : public Registry<SparseLayoutPlugin> {
 public:
  explicit SparseLayoutRegistry(Environment& env);
};

struct SparseLayoutOptions {
  // One binding per process (a plan for another run); empty: the run's own binding.
  std::vector<DeviceBinding> devices{};
};

// Builds a layout by spec with the plug-ins of Environment::current(), collectively over its
// communicator: every process passes its rows of the graph (any distribution, each global row
// held once; square: global_rows == global_cols), and gets the same layout, measured on the graph
// (stats(), edge_cut()). Errors are agreed: every process throws the same Error. `spec` as for
// hit::layout(): text, or a Setting (layout_setting(), hit/layout.hpp) that may replace it.
[[nodiscard]] SparseLayout sparse_layout(const Setting& spec, const Topology& topo,
                                         const CsrPattern& mine,
                                         const SparseLayoutOptions& options = {});
// The same from a spec built as a value: nothing is parsed.
[[nodiscard]] SparseLayout sparse_layout(const Spec& spec, const Topology& topo,
                                         const CsrPattern& mine,
                                         const SparseLayoutOptions& options = {});

namespace detail {
// Defined beside the built-in plug-ins (src/sparse/layout_support.cpp).
void register_builtin_sparse_layouts(SparseLayoutRegistry& registry);
}  // namespace detail

}  // namespace hit
