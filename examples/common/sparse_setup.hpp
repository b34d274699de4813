#pragma once
// The set-up the sparse programs share: the matrix's rows laid out by a sparse layout chosen by
// name, moved to their owners, ordered interior rows first (rows no other process needs and that
// read no ghost: they compute while the halo travels), numbered locally (CsrShape), and the halo
// that refreshes the ghosts. Also the per-rank figures the reports print.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/file.hpp"
#include "hit/core/timer.hpp"
#include "hit/sparse/csr_rows.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/sparse_halo.hpp"
#include "hit/sparse/sparse_layout.hpp"
#include "hit/sparse/sparse_layout_svg.hpp"
#include "hit/sparse/sparse_redistribute.hpp"
#include "hit/sparse/sparse_values.hpp"
#include "hit/tile.hpp"
#include "hit/topology.hpp"
#include "sparse_input.hpp"

namespace hit::app {

// One process's part of a distributed sparse matrix.
template <class T>
struct SparseSystem {
  SparseLayout layout;
  // The rows: held rows (interior first), then ghosts, and one value per nonzero.
  SparseMatrix<T> matrix;
  index_t interior = 0;  // rows [0, interior) read no ghost and are sent nowhere
  std::optional<SparseHalo> halo;
  double setup_s = 0;  // layout, redistribution, numbering and halo
  double input_s = 0;  // reading or generating the matrix (the program sets it)

  const CsrShape& shape() const noexcept { return matrix.shape(); }
  // The global names of the held rows, in local order.
  std::span<const index_t> row_names() const {
    return shape().names().subspan(0, static_cast<std::size_t>(shape().rows()));
  }
};

// Rebuilds `s` from its rows `mine` under s.layout (after a re-partition too). Collective.
template <class T>
void rebuild(Environment& env, SparseSystem<T>& s, const CsrRows<T>& mine) {
  const InteriorOrder order = interior_first_order(mine, s.layout.owners(), env.comm());
  CsrRows<T> ordered = rows_in_order(mine, order.order);
  s.interior = order.interior;
  s.matrix = SparseMatrix<T>(std::make_shared<const CsrShape>(ordered), ordered.values);
  s.halo.emplace(s.shape(), s.layout.owners(), env.comm(),
                 SparseHaloOptions{.label = "matrix halo"});
}

// Lays out the block rows `block` by `spec` (a Setting the program resolved at its start) and
// builds this process's part. Collective.
template <class T>
SparseSystem<T> distribute(Environment& env, const CsrRows<T>& block, const Setting& spec,
                           const SparseLayoutOptions& options = {}) {
  SparseSystem<T> s;
  Timer timer;
  s.layout = sparse_layout(spec, topology("array"), block, options);
  rebuild(env, s, redistribute<T>(block, s.layout.owners(), env.comm()));
  s.setup_s = timer.seconds();
  return s;
}

// The figures of this process's part, for --json's per_rank entries.
template <class T>
nlohmann::json sparse_part_json(const SparseSystem<T>& s, std::size_t element_size) {
  const SparseHalo& h = *s.halo;
  return {{"rows", s.shape().rows()},     {"nonzeros", s.shape().nonzeros()},
          {"ghosts", s.shape().ghosts()}, {"interior_rows", s.interior},
          {"neighbours", h.neighbours()}, {"halo_bytes", h.bytes_sent(element_size)}};
}

// The layout's quality, for reports.
inline nlohmann::json sparse_layout_json(const SparseLayout& l) {
  return {{"spec", l.spec()}, {"edge_cut", l.edge_cut()}, {"imbalance", l.imbalance()}};
}

// --svg of the sparse programs: the layout of a generated 2-D grid coloured by owner, written by
// rank 0 (an error on every rank for a file or a 3-D grid). Collective.
inline void draw_sparse_layout(Environment& env, const std::string& svg, const SparseInput& input,
                               const SparseLayout& l, const std::string& program) {
  if (svg.empty()) return;
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    const std::optional<GeneratorSpec> spec =
        input.generate.empty() ? std::nullopt : std::optional(GeneratorSpec::parse(input.generate));
    if (!spec || spec->kind != GeneratorKind::poisson2d) {
      throw Error(ErrorKind::invalid_argument,
                  "--svg draws generated 2-D grids only (--generate poisson2d:...), not " +
                      (spec ? "'" + spec->str() + "'" : "the file " + input.file));
    }
    write_file_atomically(svg,
                          sparse_layout_svg(l, grid_positions(*spec),
                                            program + " " + spec->str() + " (" + l.spec() + ")"));
  });
}

}  // namespace hit::app
