// `rows:by=rows|nonzeros,w=...`: contiguous ranges of global rows, process p before p+1, sized by
// the target shares (sparse_targets) of the row count or of the nonzeros.
#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/layout.hpp"
#include "sparse/layout_support.hpp"

namespace hit::detail {
namespace {

// The length of every global row, on every process: each process adds its rows' lengths into a
// vector of zeros and the vectors are summed (in pieces, as MPI counts are ints). O(rows) memory,
// as the owner vector of the layout itself.
std::vector<index_t> global_row_lengths(const CsrPattern& mine, MPI_Comm comm) {
  std::vector<index_t> lengths(static_cast<std::size_t>(mine.global_rows), 0);
  for (index_t i = 0; i < mine.rows(); ++i) {
    lengths[static_cast<std::size_t>(mine.names[static_cast<std::size_t>(i)])] =
        static_cast<index_t>(mine.columns(i).size());
  }
  constexpr std::size_t piece = std::size_t{1} << 28;
  for (std::size_t at = 0; at < lengths.size(); at += piece) {
    const std::size_t n = std::min(piece, lengths.size() - at);
    allreduce_in_place(lengths.data() + at, static_cast<int>(n), MPI_INT64_T, MPI_SUM, comm);
  }
  return lengths;
}

// The first row of every part (and n at the end): part k ends at the row boundary whose nonzero
// prefix is nearest the target share (ties to the lower boundary), so each part is within one
// row's nonzeros of its share.
std::vector<index_t> nonzero_boundaries(const std::vector<index_t>& lengths,
                                        const std::vector<double>& weights) {
  const auto n = static_cast<index_t>(lengths.size());
  std::vector<index_t> prefix(lengths.size() + 1, 0);  // prefix[j]: nonzeros of rows [0, j)
  for (std::size_t r = 0; r < lengths.size(); ++r) prefix[r + 1] = prefix[r] + lengths[r];
  double sum = 0;
  for (const double w : weights) sum += w;
  std::vector<index_t> first(weights.size() + 1, 0);
  double cumulative = 0;
  for (std::size_t k = 0; k + 1 < weights.size(); ++k) {
    cumulative += weights[k];
    if (std::all_of(weights.begin() + static_cast<std::ptrdiff_t>(k) + 1, weights.end(),
                    [](double w) { return w == 0; })) {
      first[k + 1] = n;  // the processes after k have weight 0: not even empty rows for them
      continue;
    }
    const double target = static_cast<double>(prefix.back()) * (cumulative / sum);
    auto it = std::lower_bound(prefix.begin(), prefix.end(), target,
                               [](index_t v, double t) { return static_cast<double>(v) < t; });
    auto j = static_cast<index_t>(it - prefix.begin());
    if (j > 0 && target - static_cast<double>(prefix[static_cast<std::size_t>(j) - 1]) <=
                     static_cast<double>(prefix[static_cast<std::size_t>(j)]) - target) {
      --j;
    }
    first[k + 1] = std::clamp(j, first[k], n);
  }
  first.back() = n;
  return first;
}

class RowsLayout final : public SparseLayoutPlugin {
 public:
  std::string name() const override { return "rows"; }
  std::string description() const override {
    return "contiguous ranges of rows, process 0 first, sized by the target shares of the row "
           "count (by=rows) or of the nonzeros (by=nonzeros), each within one row of its share";
  }
  std::vector<ParamInfo> params() const override {
    std::vector<ParamInfo> out = {ParamInfo::choice(
        "by", "what the shares divide: the rows, or the nonzeros", {"rows", "nonzeros"}, "rows")};
    for (ParamInfo& p : sparse_target_params()) out.push_back(std::move(p));
    return out;
  }

  // By rows and by nonzeros; on unlike devices also weighed by the speeds, and by the speeds
  // raised to powers around one: the speeds are taken at an even share, where a device's
  // per-row time is not the one at the share they give it (launches weigh more on a small share,
  // a share that fits a cache runs faster), so the prediction finds where the balance lies, as
  // the blocksLB factors do for the dense layouts.
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    const Spec by_nonzeros = Spec(name()).with("by", "nonzeros");
    std::vector<Spec> out{Spec(name()), by_nonzeros};
    if (c.even_speeds()) return out;
    out.push_back(by_nonzeros.with("w", c.weights()));
    for (const double power : {0.5, 0.75, 1.25, 1.5}) {
      std::vector<double> skewed = c.speeds;
      for (double& x : skewed) x = CandidateContext::round_to_digits(std::pow(x, power), 4);
      out.push_back(by_nonzeros.with("w", skewed));
    }
    return out;
  }

  SparseLayout make(const SparseLayoutRequest& request) const override {
    const CsrPattern& graph = *request.graph;
    const index_t n = graph.global_rows;
    const SparseTargets targets = sparse_targets(request, n);
    std::vector<index_t> first;
    std::vector<index_t> lengths;
    if (request.spec.get_string("by", "rows") == "nonzeros") {
      lengths = global_row_lengths(graph, request.comm);
    }
    if (std::any_of(lengths.begin(), lengths.end(), [](index_t l) { return l > 0; })) {
      first = nonzero_boundaries(lengths, targets.weights);
    } else {  // by rows, or by nonzeros without any
      const std::vector<index_t> sizes = parts_from_weights(targets.weights, n);
      first.assign(sizes.size() + 1, 0);
      for (std::size_t p = 0; p < sizes.size(); ++p) first[p + 1] = first[p] + sizes[p];
    }
    std::vector<std::int32_t> owner(static_cast<std::size_t>(n));
    for (std::size_t p = 0; p + 1 < first.size(); ++p) {
      std::fill(owner.begin() + first[p], owner.begin() + first[p + 1],
                static_cast<std::int32_t>(p));
    }
    std::vector<double> predicted = predicted_times(targets, owner);
    return {request.topology, request.spec.str(), std::move(owner), std::move(predicted)};
  }
};

}  // namespace

void register_rows_sparse_layout(SparseLayoutRegistry& registry) {
  registry.add(std::make_shared<RowsLayout>());
}

}  // namespace hit::detail
