#include "hit/sparse/csr_shape.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"

namespace hit {

namespace {

constexpr index_t max_local_vertices = std::numeric_limits<local_index_t>::max();

// A table of global -> local costs 4 bytes per global vertex: worth it while that stays within a
// few times the local names (every vertex of a process's graph, one-process runs above all).
constexpr index_t table_factor = 4;

[[noreturn]] void too_many_vertices(index_t n) {
  throw Error(ErrorKind::invalid_argument,
              "a sparse shape of " + std::to_string(n) +
                  " local vertices (rows and ghosts) does not fit 32-bit local indices: use more "
                  "processes");
}

}  // namespace

CsrShape::CsrShape(const CsrPattern& rows)
    : CsrShape(std::max(rows.global_rows, rows.global_cols), rows.names, rows.rows(), rows.row_ptr,
               rows.cols) {
  rows.check("sparse shape");
}

CsrShape::CsrShape(index_t global_vertices, std::span<const index_t> names, index_t owned,
                   std::span<const index_t> row_ptr, std::span<const index_t> global_cols)
    : global_vertices_(global_vertices), owned_(owned) {
  const auto n = static_cast<index_t>(names.size());
  require(row_ptr.size() == names.size() + 1, ErrorKind::invalid_argument,
          "sparse shape: " + std::to_string(row_ptr.size()) + " row offsets for " +
              std::to_string(n) + " rows");
  if (n > max_local_vertices) too_many_vertices(n);
  names_.assign(names.begin(), names.end());
  // Held rows first, in the given order; the index over them finds which columns are ghosts.
  build_index();
  for (index_t r = 0; r < n; ++r) {
    if (to_local(names_[static_cast<std::size_t>(r)]) != r) {
      throw Error(ErrorKind::invalid_argument,
                  "sparse shape: row " + std::to_string(names_[static_cast<std::size_t>(r)]) +
                      " is given twice");
    }
  }
  std::vector<index_t> ghosts;
  for (const index_t c : global_cols) {
    require(c >= 0 && c < global_vertices_, ErrorKind::invalid_argument, [&] {
      return "sparse shape: column " + std::to_string(c) + " outside the " +
             std::to_string(global_vertices_) + " vertices";
    });
    if (to_local(c) < 0) ghosts.push_back(c);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  const index_t total =
      checked_add(n, static_cast<index_t>(ghosts.size()), "sparse shape vertices");
  if (total > max_local_vertices) too_many_vertices(total);
  names_.insert(names_.end(), ghosts.begin(), ghosts.end());
  build_index();

  row_ptr_.assign(row_ptr.begin(), row_ptr.end());
  cols_.resize(global_cols.size());
  for (std::size_t k = 0; k < global_cols.size(); ++k) {
    cols_[k] = static_cast<local_index_t>(to_local(global_cols[k]));
  }
}

void CsrShape::build_index() {
  const auto n = static_cast<index_t>(names_.size());
  table_.clear();
  sorted_.clear();
  if (n > 0 && global_vertices_ <= table_factor * n + 1024) {
    table_.assign(static_cast<std::size_t>(global_vertices_), -1);
    for (index_t l = 0; l < n; ++l) {
      auto& slot = table_[static_cast<std::size_t>(names_[static_cast<std::size_t>(l)])];
      if (slot < 0) slot = static_cast<local_index_t>(l);
    }
    return;
  }
  sorted_.reserve(static_cast<std::size_t>(n));
  for (index_t l = 0; l < n; ++l) sorted_.emplace_back(names_[static_cast<std::size_t>(l)], l);
  // stable: a repeated name keeps its first local index, so the duplicate check above sees it.
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::span<const local_index_t> CsrShape::row(index_t r) const {
  require(r >= 0 && r < rows(), ErrorKind::invalid_argument, [&] {
    return "sparse shape: row " + std::to_string(r) + " outside the " + std::to_string(rows()) +
           " held rows";
  });
  const auto b = static_cast<std::size_t>(row_ptr_[static_cast<std::size_t>(r)]);
  const auto e = static_cast<std::size_t>(row_ptr_[static_cast<std::size_t>(r) + 1]);
  return std::span<const local_index_t>(cols_).subspan(b, e - b);
}

index_t CsrShape::to_global(index_t local) const {
  require(local >= 0 && local < vertices(), ErrorKind::invalid_argument, [&] {
    return "sparse shape: local vertex " + std::to_string(local) + " outside the " +
           std::to_string(vertices()) + " held";
  });
  return names_[static_cast<std::size_t>(local)];
}

index_t CsrShape::to_local(index_t global) const noexcept {
  if (global < 0 || global >= global_vertices_) return -1;
  if (!table_.empty()) return table_[static_cast<std::size_t>(global)];
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), global,
                             [](const auto& p, index_t g) { return p.first < g; });
  return it != sorted_.end() && it->first == global ? it->second : -1;
}

CsrPattern CsrShape::pattern() const {
  CsrPattern out;
  out.global_rows = global_vertices_;
  out.global_cols = global_vertices_;
  out.names.assign(names_.begin(), names_.begin() + rows());
  out.row_ptr = row_ptr_;
  out.cols.resize(cols_.size());
  for (std::size_t k = 0; k < cols_.size(); ++k) {
    out.cols[k] = names_[static_cast<std::size_t>(cols_[k])];
  }
  return out;
}

CsrShape CsrShape::select(std::span<const index_t> local_rows) const {
  std::vector<index_t> names, ptr{0}, cols;
  names.reserve(local_rows.size());
  for (const index_t r : local_rows) {
    const auto columns = row(r);
    names.push_back(names_[static_cast<std::size_t>(r)]);
    for (const local_index_t c : columns) cols.push_back(names_[static_cast<std::size_t>(c)]);
    ptr.push_back(static_cast<index_t>(cols.size()));
  }
  const auto n = static_cast<index_t>(names.size());
  return CsrShape(global_vertices_, names, n, ptr, cols);
}

CsrShape CsrShape::expand(const CsrShape& whole, int distance) const {
  require(distance >= 1, ErrorKind::invalid_argument,
          "sparse shape: expansion distance " + std::to_string(distance) + " (want 1 or more)");
  require(whole.global_vertices() == global_vertices_, ErrorKind::shape,
          "sparse shape: expanding within a graph of " + std::to_string(whole.global_vertices()) +
              " vertices, this shape has " + std::to_string(global_vertices_));
  // Breadth-first from the owned rows: level d adds the rows of the vertices first met at d.
  std::vector<index_t> held(names_.begin(), names_.begin() + owned_);
  std::vector<char> seen(static_cast<std::size_t>(whole.vertices()), 0);
  auto whole_row = [&](index_t global) {
    const index_t l = whole.to_local(global);
    require(l >= 0 && l < whole.rows(), ErrorKind::invalid_argument, [&] {
      return "sparse shape: expanding needs row " + std::to_string(global) +
             ", which the whole graph does not hold";
    });
    return l;
  };
  for (const index_t g : held) seen[static_cast<std::size_t>(whole_row(g))] = 1;
  std::size_t level_begin = 0;
  for (int d = 1; d < distance; ++d) {
    const std::size_t level_end = held.size();
    for (std::size_t k = level_begin; k < level_end; ++k) {
      for (const local_index_t c : whole.row(whole_row(held[k]))) {
        const index_t g = whole.names_[static_cast<std::size_t>(c)];
        const index_t l = whole_row(g);
        if (seen[static_cast<std::size_t>(l)] == 0) {
          seen[static_cast<std::size_t>(l)] = 1;
          held.push_back(g);
        }
      }
    }
    level_begin = level_end;
  }
  std::vector<index_t> ptr{0}, cols;
  for (const index_t g : held) {
    for (const local_index_t c : whole.row(whole_row(g))) {
      cols.push_back(whole.names_[static_cast<std::size_t>(c)]);
    }
    ptr.push_back(static_cast<index_t>(cols.size()));
  }
  return CsrShape(global_vertices_, held, owned_, ptr, cols);
}

}  // namespace hit
