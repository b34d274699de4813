#pragma once
// What the built-in sparse layout plug-ins (`rows`, `metis`) share: the parameters that set each
// process's target share (w=, models=, weights=binding) and how they are read, and their
// registration functions.
#include <span>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/fpm/model.hpp"
#include "hit/sparse/sparse_layout.hpp"

namespace hit::detail {

void register_rows_sparse_layout(SparseLayoutRegistry& registry);   // layout_rows.cpp
void register_metis_sparse_layout(SparseLayoutRegistry& registry);  // layout_metis.cpp

// The target share of every process of the topology, and the models they came from.
struct SparseTargets {
  std::vector<double> weights;     // one per process, >= 0, not all 0 (0: the process gets none)
  std::vector<fpm::Model> models;  // one per process when from models=, else empty
};

// The declarations of w=, models=, algorithm=, kind= and weights=.
[[nodiscard]] std::vector<ParamInfo> sparse_target_params();

// The targets for `units` computation units (a model's unit is one row): from w= (one weight per
// process), models= (the sizes an FPM partitioner gives every process for `units`; equal shares
// when units is 0), weights=binding (the relative speed of each process's device), else equal.
// Processes past the topology's grid get 0. Reads the model files on every process and agrees on
// the outcome (collective over request.comm): a file one process cannot read is the same
// Error(io) everywhere, naming the spec.
[[nodiscard]] SparseTargets sparse_targets(const SparseLayoutRequest& request, index_t units);

// The time each process's model predicts for the rows it was given (empty without models).
[[nodiscard]] std::vector<double> predicted_times(const SparseTargets& targets,
                                                  const std::vector<std::int32_t>& owners);

// The graph METIS partitions, over vertices 0 .. n-1 in CSR form: edge {r, c} for every entry
// (r, c) of the rows given (global names, row lengths, the columns of each row in turn) and its
// reverse, r != c, each neighbour list ascending and without repeats. Linear in the entries (plus
// a sort of each list). Error(invalid_argument) naming the spec for a row given twice.
struct SymmetricGraph {
  std::vector<index_t> xadj;    // n + 1 offsets
  std::vector<index_t> adjncy;  // the neighbours of every vertex in turn
};
[[nodiscard]] SymmetricGraph symmetric_graph(std::span<const index_t> names,
                                             std::span<const index_t> lengths,
                                             std::span<const index_t> cols, index_t n,
                                             const SparseLayoutRequest& request);

// Error(kind) "sparse layout 'SPEC': why".
[[nodiscard]] Error sparse_layout_error(const SparseLayoutRequest& request, ErrorKind kind,
                                        const std::string& why);

}  // namespace hit::detail
