#pragma once
// Rows of a global sparse matrix or graph, with global column indices: what readers, generators,
// layouts and redistributions exchange (docs/sparse.md). A process holds any set of rows, each
// row held by exactly one process of a run; the rows' global names say which.

#include <cstdint>
#include <span>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/shape.hpp"

namespace hit {

// The structure alone (a graph: column c of row r is an edge r -> c).
struct CsrPattern {
  index_t global_rows = 0;
  index_t global_cols = 0;
  std::vector<index_t> names;       // the global index of each row held, in the order held
  std::vector<index_t> row_ptr{0};  // names.size() + 1 offsets into cols
  std::vector<index_t> cols;        // global column indices, ascending within each row

  [[nodiscard]] index_t rows() const noexcept { return static_cast<index_t>(names.size()); }
  [[nodiscard]] index_t nonzeros() const noexcept { return static_cast<index_t>(cols.size()); }
  // The global columns of held row `r` (0 <= r < rows()).
  [[nodiscard]] std::span<const index_t> columns(index_t r) const {
    const auto b = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r)]);
    const auto e = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r) + 1]);
    return {cols.data() + b, e - b};
  }
  // Error(invalid_argument) naming `what` unless the invariants above hold (sizes agree, names
  // and columns inside the global extents, columns strictly ascending within a row).
  void check(std::string_view what) const;
};

// The structure with one value per nonzero (a pattern file's values are 1).
template <class T>
struct CsrRows : CsrPattern {
  std::vector<T> values;  // one per entry of cols

  [[nodiscard]] std::span<const T> row_values(index_t r) const {
    const auto b = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r)]);
    const auto e = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r) + 1]);
    return {values.data() + b, e - b};
  }
  void check(std::string_view what) const {
    CsrPattern::check(what);
    require(values.size() == cols.size(), ErrorKind::invalid_argument,
            std::string(what) + ": " + std::to_string(values.size()) + " values for " +
                std::to_string(cols.size()) + " column indices");
  }
};

}  // namespace hit
