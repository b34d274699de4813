// `metis:w=...|models=...|weights=binding,vw=one|nonzeros,seed=S,ufactor=U`: METIS 5 k-way
// partitioning of the graph into one part per process with a target share each
// (sparse_targets). The graph is gathered on rank 0, made symmetric without self loops (what
// METIS needs: edge {r, c} for every entry (r, c) or (c, r), r != c), partitioned there with a
// fixed seed, and the owners broadcast, so every process gets the same layout.
#include <metis.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/log.hpp"
#include "hit/core/timer.hpp"
#include "sparse/layout_support.hpp"

namespace hit::detail {
namespace {

// The graph's rows gathered on rank 0 (empty elsewhere), in rank order.
struct GatheredRows {
  std::vector<index_t> names;
  std::vector<index_t> lengths;
  std::vector<index_t> cols;
};

// Gatherv of one array whose per-rank counts every rank knows; `counts` and the total fit an int
// (checked by the caller).
void gather_into(const std::vector<index_t>& mine, const std::vector<int>& counts,
                 std::vector<index_t>& all, const SparseLayoutRequest& request) {
  std::vector<int> offsets(counts.size() + 1, 0);
  for (std::size_t p = 0; p < counts.size(); ++p) offsets[p + 1] = offsets[p] + counts[p];
  if (request.rank == 0) all.resize(static_cast<std::size_t>(offsets.back()));
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Igatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                         counts.data(), offsets.data(), MPI_INT64_T, 0, request.comm, &req),
            "MPI_Igatherv");
  wait_all(1, &req, "MPI_Igatherv", false);
}

GatheredRows gather_rows(const SparseLayoutRequest& request) {
  const CsrPattern& mine = *request.graph;
  struct Sizes {
    index_t rows = 0;
    index_t nonzeros = 0;
  };
  const auto sizes = allgather(Sizes{mine.rows(), mine.nonzeros()}, request.comm);
  std::vector<int> row_counts;
  std::vector<int> nonzero_counts;
  index_t rows = 0;
  index_t nonzeros = 0;
  for (const Sizes& s : sizes) {
    rows = checked_add(rows, s.rows, "the graph's rows");
    nonzeros = checked_add(nonzeros, s.nonzeros, "the graph's nonzeros");
    row_counts.push_back(static_cast<int>(std::min<index_t>(s.rows, INT_MAX)));
    nonzero_counts.push_back(static_cast<int>(std::min<index_t>(s.nonzeros, INT_MAX)));
  }
  // Every rank knows the totals, so every rank throws alike. METIS here takes 32-bit indices and
  // the symmetric graph may hold twice the entries.
  const index_t most = std::min<index_t>(INT_MAX, std::numeric_limits<idx_t>::max());
  if (nonzeros > most / 2 || rows > most) {
    throw sparse_layout_error(
        request, ErrorKind::invalid_argument,
        "the graph has " + std::to_string(rows) + " rows and " + std::to_string(nonzeros) +
            " nonzeros; METIS takes at most " + std::to_string(most) + " vertices and " +
            std::to_string(most / 2) + " nonzeros (gathered on one process, 32-bit indices)");
  }
  GatheredRows out;
  std::vector<index_t> lengths(mine.names.size());
  for (index_t i = 0; i < mine.rows(); ++i) {
    lengths[static_cast<std::size_t>(i)] = static_cast<index_t>(mine.columns(i).size());
  }
  gather_into(mine.names, row_counts, out.names, request);
  gather_into(lengths, row_counts, out.lengths, request);
  gather_into(mine.cols, nonzero_counts, out.cols, request);
  return out;
}

// METIS's CSR form of the symmetric graph, with vertex weights.
struct MetisGraph {
  std::vector<idx_t> xadj;
  std::vector<idx_t> adjncy;
  std::vector<idx_t> vwgt;
};

MetisGraph metis_graph(const GatheredRows& rows, index_t n, bool weigh_by_nonzeros,
                       const SparseLayoutRequest& request) {
  const SymmetricGraph sym = symmetric_graph(rows.names, rows.lengths, rows.cols, n, request);
  MetisGraph g;
  g.xadj.assign(sym.xadj.begin(), sym.xadj.end());  // fits: checked by gather_rows
  g.adjncy.assign(sym.adjncy.begin(), sym.adjncy.end());
  g.vwgt.assign(static_cast<std::size_t>(n), 1);
  if (weigh_by_nonzeros) {
    for (std::size_t i = 0; i < rows.names.size(); ++i) {
      // At least 1: METIS needs a positive total weight, and an empty row still costs a little.
      g.vwgt[static_cast<std::size_t>(rows.names[i])] =
          static_cast<idx_t>(std::max<index_t>(1, rows.lengths[i]));
    }
  }
  return g;
}

// One METIS partition into tpwgts.size() parts (>= 2).
struct MetisResult {
  std::vector<idx_t> part;  // of every vertex
  idx_t edgecut = 0;        // the edges cut, each once
  bool recursive = false;   // by recursive bisection (else k-way)
};

MetisResult call_metis(MetisGraph& g, std::vector<real_t> tpwgts, idx_t* options, bool recursive,
                       const SparseLayoutRequest& request) {
  idx_t nvtxs = static_cast<idx_t>(g.vwgt.size());
  idx_t ncon = 1;
  idx_t nparts = static_cast<idx_t>(tpwgts.size());
  MetisResult r{std::vector<idx_t>(g.vwgt.size(), 0), 0, recursive};
  const auto method = recursive ? METIS_PartGraphRecursive : METIS_PartGraphKway;
  const int status =
      method(&nvtxs, &ncon, g.xadj.data(), g.adjncy.data(), g.vwgt.data(), nullptr, nullptr,
             &nparts, tpwgts.data(), nullptr, options, &r.edgecut, r.part.data());
  if (status != METIS_OK) {
    const std::string why = status == METIS_ERROR_INPUT    ? "erroneous input"
                            : status == METIS_ERROR_MEMORY ? "out of memory"
                                                           : "an error";
    throw sparse_layout_error(
        request, ErrorKind::plugin,
        std::string(recursive ? "METIS_PartGraphRecursive" : "METIS_PartGraphKway") + " failed (" +
            why + ", status " + std::to_string(status) + ") on a graph of " +
            std::to_string(nvtxs) + " vertices into " + std::to_string(nparts) + " parts");
  }
  return r;
}

// How far the heaviest part is beyond METIS's tolerance, (1 + ufactor/1000) times its target
// weight, in units of the heaviest vertex (<= 0: within it).
double excess(const MetisGraph& g, const std::vector<real_t>& tpwgts,
              const std::vector<idx_t>& part, idx_t ufactor) {
  std::vector<double> weight(tpwgts.size(), 0.0);
  double total = 0;
  double heaviest = 0;
  for (std::size_t v = 0; v < part.size(); ++v) {
    const auto w = static_cast<double>(g.vwgt[v]);
    weight[static_cast<std::size_t>(part[v])] += w;
    total += w;
    heaviest = std::max(heaviest, w);
  }
  const double tolerance = 1 + static_cast<double>(ufactor) / 1000;
  double worst = -std::numeric_limits<double>::infinity();
  for (std::size_t p = 0; p < weight.size(); ++p) {
    worst = std::max(worst, weight[p] - tolerance * static_cast<double>(tpwgts[p]) * total);
  }
  return worst / heaviest;
}

// METIS k-way; when a part ends beyond METIS's tolerance (k-way does on graphs of a few vertices
// a part: 2 vertices into 2 parts gives one part both), recursive bisection too, kept when it
// balances better.
MetisResult run_metis(MetisGraph& g, const std::vector<real_t>& tpwgts, idx_t seed, idx_t ufactor,
                      const SparseLayoutRequest& request) {
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = seed;
  options[METIS_OPTION_UFACTOR] = ufactor;
  options[METIS_OPTION_NUMBERING] = 0;
  MetisResult kway = call_metis(g, tpwgts, options, false, request);
  const double kway_excess = excess(g, tpwgts, kway.part, ufactor);
  if (kway_excess <= 0) return kway;
  MetisResult bisected = call_metis(g, tpwgts, options, true, request);
  if (excess(g, tpwgts, bisected.part, ufactor) < kway_excess) return bisected;
  return kway;
}

// The processes that get a part: those of positive weight, at most `vertices` of them (the
// largest weights, ties to the lower rank), in rank order.
std::vector<int> active_processes(const std::vector<double>& weights, index_t vertices) {
  std::vector<int> procs;
  for (std::size_t p = 0; p < weights.size(); ++p) {
    if (weights[p] > 0) procs.push_back(static_cast<int>(p));
  }
  if (static_cast<index_t>(procs.size()) > vertices) {
    std::stable_sort(procs.begin(), procs.end(), [&](int a, int b) {
      return weights[static_cast<std::size_t>(a)] > weights[static_cast<std::size_t>(b)];
    });
    procs.resize(static_cast<std::size_t>(vertices));
    std::sort(procs.begin(), procs.end());
  }
  return procs;
}

class MetisLayout final : public SparseLayoutPlugin {
 public:
  std::string name() const override { return "metis"; }
  std::string description() const override {
    return "METIS 5 k-way partition of the (symmetrised) graph, one part per process with a "
           "target share from w=, models= or the device binding (default equal), within "
           "METIS's imbalance tolerance ufactor; fixed seed, identical on every process";
  }
  std::vector<ParamInfo> params() const override {
    std::vector<ParamInfo> out = {
        ParamInfo::choice("vw", "vertex weights: 1 per row, or the row's nonzeros (at least 1)",
                          {"one", "nonzeros"}, "one"),
        ParamInfo::integer("seed", "METIS's random seed (METIS_OPTION_SEED)", "1")
            .at_least(0)
            .at_most(std::numeric_limits<std::int32_t>::max()),
        ParamInfo::integer("ufactor",
                           "METIS's load imbalance tolerance in thousandths: each part's weight "
                           "at most (1 + ufactor/1000) times its target",
                           "30")
            .at_least(1)
            .at_most(100000)};
    for (ParamInfo& p : sparse_target_params()) out.push_back(std::move(p));
    return out;
  }

  // On unlike devices also weighed by the speeds, and by the models when given.
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    std::vector<Spec> out{Spec(name())};
    if (c.even_speeds()) return out;
    out.push_back(Spec(name()).with("w", c.weights()));
    if (!c.model_files.empty()) {
      out.push_back(Spec(name()).with("models", c.model_files));
    }
    return out;
  }

  SparseLayout make(const SparseLayoutRequest& request) const override {
    const index_t n = request.graph->global_rows;
    const SparseTargets targets = sparse_targets(request, n);
    const std::vector<int> active = active_processes(targets.weights, n);
    std::vector<std::int32_t> owner(static_cast<std::size_t>(n),
                                    active.empty() ? 0 : active.front());
    if (active.size() >= 2) owner = partition(request, targets.weights, active);
    std::vector<double> predicted = predicted_times(targets, owner);
    return {request.topology, request.spec.str(), std::move(owner), std::move(predicted)};
  }

 private:
  // Collective: the owner of every row, computed on rank 0 and broadcast.
  static std::vector<std::int32_t> partition(const SparseLayoutRequest& request,
                                             const std::vector<double>& weights,
                                             const std::vector<int>& active) {
    const GatheredRows rows = gather_rows(request);
    std::vector<std::int32_t> owner;
    std::exception_ptr failure;
    if (request.rank == 0) {
      try {
        const Timer timer;
        const index_t n = request.graph->global_rows;
        MetisGraph g =
            metis_graph(rows, n, request.spec.get_string("vw", "one") == "nonzeros", request);
        double sum = 0;
        for (const int p : active) sum += weights[static_cast<std::size_t>(p)];
        std::vector<real_t> tpwgts;
        for (const int p : active) {
          tpwgts.push_back(static_cast<real_t>(weights[static_cast<std::size_t>(p)] / sum));
        }
        const double built = timer.seconds();
        const MetisResult metis =
            run_metis(g, tpwgts, static_cast<idx_t>(request.spec.get_int("seed", 1)),
                      static_cast<idx_t>(request.spec.get_int("ufactor", 30)), request);
        const std::vector<idx_t>& part = metis.part;
        log::info("sparse layout '" + request.spec.str() + "': " + std::to_string(n) +
                  " vertices, " + std::to_string(g.adjncy.size() / 2) + " edges into " +
                  std::to_string(tpwgts.size()) + " parts: graph " + std::to_string(built) +
                  " s, METIS " + std::to_string(timer.seconds() - built) + " s (" +
                  (metis.recursive ? "recursive bisection" : "k-way") + "), edge cut " +
                  std::to_string(metis.edgecut));
        owner.resize(part.size());
        for (std::size_t v = 0; v < part.size(); ++v) {
          owner[v] = active[static_cast<std::size_t>(part[v])];
        }
      } catch (...) {
        failure = std::current_exception();
      }
    }
    agree(request.comm, failure);
    // In pieces: MPI counts are ints, and the owners of 2^29 rows are 2^31 bytes.
    owner.resize(static_cast<std::size_t>(request.graph->global_rows));
    constexpr std::size_t piece = std::size_t{1} << 28;
    for (std::size_t at = 0; at < owner.size(); at += piece) {
      broadcast(owner.data() + at, static_cast<int>(std::min(piece, owner.size() - at)),
                MPI_INT32_T, 0, request.comm);
    }
    return owner;
  }
};

}  // namespace

void register_metis_sparse_layout(SparseLayoutRegistry& registry) {
  registry.add(std::make_shared<MetisLayout>());
}

}  // namespace hit::detail
