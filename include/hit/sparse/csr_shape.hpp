#pragma once
// A sparse shape (Hitmap's CSR shape): the rows of a graph or sparse matrix that one process
// holds, in a local numbering, with the global name of every local vertex (docs/sparse.md).
//
// Local numbering: the held rows are vertices 0 .. rows()-1 in the order they were given (the
// first owned() of them are the process's own rows, the rest the halo rows an expansion by more
// than one edge added); every column that is not a held row is a ghost vertex, numbered
// rows() .. vertices()-1 by ascending global name. Column indices are stored in this local
// numbering (32-bit: a process holds fewer than 2^31 vertices; checked), so a vector over the
// local vertices (own values, then ghosts) is what a CSR product reads.
//
// Global names are 64-bit. to_local() is a table lookup when the process holds a large share of
// the global vertices and a binary search of sorted names otherwise: building either is linear
// in the local graph (plus a sort of the names in the second case), never a scan per vertex.

#include <cstdint>
#include <span>
#include <vector>

#include "hit/shape.hpp"
#include "hit/sparse/csr_rows.hpp"

namespace hit {

using local_index_t = std::int32_t;

class CsrShape {
 public:
  // The empty shape (an inactive process's): no rows, no vertices.
  CsrShape() = default;

  // The rows of `rows` (global names, global columns; each name once), all owned. Columns must
  // lie inside [0, global vertices); the global vertex count is max(global_rows, global_cols).
  // Error(invalid_argument) when the pattern is malformed or needs 2^31 local vertices or more.
  explicit CsrShape(const CsrPattern& rows);

  // ---- sizes -------------------------------------------------------------------------------
  [[nodiscard]] index_t global_vertices() const noexcept { return global_vertices_; }
  [[nodiscard]] index_t rows() const noexcept { return static_cast<index_t>(row_ptr_.size()) - 1; }
  [[nodiscard]] index_t owned() const noexcept { return owned_; }
  [[nodiscard]] index_t vertices() const noexcept { return static_cast<index_t>(names_.size()); }
  [[nodiscard]] index_t ghosts() const noexcept { return vertices() - rows(); }
  [[nodiscard]] index_t nonzeros() const noexcept { return static_cast<index_t>(cols_.size()); }

  // ---- structure (local numbering) ---------------------------------------------------------
  [[nodiscard]] std::span<const index_t> row_ptr() const noexcept { return row_ptr_; }
  [[nodiscard]] std::span<const local_index_t> cols() const noexcept { return cols_; }
  // The local columns of held row `r` (0 <= r < rows()), ascending by global name.
  [[nodiscard]] std::span<const local_index_t> row(index_t r) const;
  // Position k of row r's columns is nonzero row_ptr()[r] + k of the values of a matrix.

  // ---- names -------------------------------------------------------------------------------
  // The global name of every local vertex (held rows, then ghosts ascending).
  [[nodiscard]] std::span<const index_t> names() const noexcept { return names_; }
  [[nodiscard]] std::span<const index_t> ghost_names() const noexcept {
    return std::span<const index_t>(names_).subspan(static_cast<std::size_t>(rows()));
  }
  // Checked: Error(invalid_argument) for a local index outside [0, vertices()).
  [[nodiscard]] index_t to_global(index_t local) const;
  // The local index of global vertex `global`; -1 when this shape does not hold it.
  [[nodiscard]] index_t to_local(index_t global) const noexcept;
  [[nodiscard]] bool holds(index_t global) const noexcept { return to_local(global) >= 0; }

  // ---- algebra -----------------------------------------------------------------------------
  // The subgraph of the listed held rows (local indices, each once), all owned, in that order:
  // names kept, ghosts re-derived from what the selected rows reference.
  [[nodiscard]] CsrShape select(std::span<const index_t> local_rows) const;
  // This shape's owned rows plus every vertex within `distance` - 1 edges of them as halo rows
  // (their rows taken from `whole`, a shape holding every row they need, e.g. the whole graph),
  // so the ghosts are the vertices at exactly `distance` edges. distance 1 gives the owned rows
  // back with their ghosts; 0 is an error. Error(invalid_argument) when `whole` lacks a row.
  [[nodiscard]] CsrShape expand(const CsrShape& whole, int distance) const;

  // The rows back with global columns (owned and halo rows alike), e.g. to send them elsewhere.
  [[nodiscard]] CsrPattern pattern() const;

  friend bool operator==(const CsrShape& a, const CsrShape& b) {
    return a.global_vertices_ == b.global_vertices_ && a.owned_ == b.owned_ &&
           a.row_ptr_ == b.row_ptr_ && a.cols_ == b.cols_ && a.names_ == b.names_;
  }

 private:
  // Builds from held rows given by global names and global columns; the first `owned` are owned.
  CsrShape(index_t global_vertices, std::span<const index_t> names, index_t owned,
           std::span<const index_t> row_ptr, std::span<const index_t> global_cols);
  void build_index();

  index_t global_vertices_ = 0;
  index_t owned_ = 0;
  std::vector<index_t> row_ptr_{0};
  std::vector<local_index_t> cols_;
  std::vector<index_t> names_;
  // Global -> local: a table over [0, global_vertices_) (-1 where not held) when it is at most
  // a few times the local size, else the names sorted with their local indices.
  std::vector<local_index_t> table_;
  std::vector<std::pair<index_t, index_t>> sorted_;
};

}  // namespace hit
