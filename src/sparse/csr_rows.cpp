#include "hit/sparse/csr_rows.hpp"

#include <string>

namespace hit {

void CsrPattern::check(std::string_view what) const {
  const std::string w(what);
  auto fail = [&](const std::string& message) {
    throw Error(ErrorKind::invalid_argument, w + ": " + message);
  };
  if (global_rows < 0 || global_cols < 0) fail("negative global extents");
  if (row_ptr.size() != names.size() + 1) {
    fail(std::to_string(row_ptr.size()) + " row offsets for " + std::to_string(names.size()) +
         " rows (want one more than rows)");
  }
  if (row_ptr.front() != 0 || row_ptr.back() != nonzeros()) {
    fail("row offsets run from " + std::to_string(row_ptr.front()) + " to " +
         std::to_string(row_ptr.back()) + ", not from 0 to the " + std::to_string(nonzeros()) +
         " column indices");
  }
  for (std::size_t r = 0; r < names.size(); ++r) {
    if (names[r] < 0 || names[r] >= global_rows) {
      fail("row name " + std::to_string(names[r]) + " outside [0, " + std::to_string(global_rows) +
           ")");
    }
    if (row_ptr[r + 1] < row_ptr[r])
      fail("row offsets decrease at row " + std::to_string(names[r]));
    for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      const index_t c = cols[static_cast<std::size_t>(k)];
      if (c < 0 || c >= global_cols) {
        fail("column " + std::to_string(c) + " of row " + std::to_string(names[r]) +
             " outside [0, " + std::to_string(global_cols) + ")");
      }
      if (k > row_ptr[r] && cols[static_cast<std::size_t>(k) - 1] >= c) {
        fail("columns of row " + std::to_string(names[r]) + " are not strictly ascending (column " +
             std::to_string(c) + ")");
      }
    }
  }
}

}  // namespace hit
