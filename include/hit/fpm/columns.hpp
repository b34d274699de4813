#pragma once
// The column-based arrangement of rectangles (Beaumont, Boudet, Rastello, Robert, 2001; used by
// Clarke et al. for the heterogeneous matrix product): q rectangles with prescribed areas tile the
// unit square in full-height columns, with the smallest sum of half-perimeters (for an
// outer-product matrix product, the total communication volume).
//
// The optimum among column arrangements is exact and fast: some optimal arrangement puts the
// areas, sorted ascending, into columns that are contiguous runs of that order (a column with
// more rectangles holds smaller areas, else swapping two lowers the cost), so a dynamic programme
// over the prefix sums finds it in O(q²).

#include <span>
#include <vector>

namespace hit::fpm {

struct ColumnArrangement {
  // Indices into the areas given, column by column (left to right), each column's rectangles top
  // to bottom. Zero areas are left out (they get no rectangle).
  std::vector<std::vector<int>> columns;
  // Σ over rectangles of (height + width) on the unit square: c + Σ_k |C_k|·S_k, with S_k the
  // share of column k (its width). 0 when no area is positive.
  double cost = 0;
};

// Throws Error(invalid_argument) for a negative or non-finite area. Columns hold ascending runs
// of the sorted areas (ties by index), from the one with the smallest areas to the largest.
ColumnArrangement arrange_columns(std::span<const double> areas);

// The cost of arranging `areas` in the given `columns` (indices, as in ColumnArrangement), on the
// unit square: for tests and for comparing with grid arrangements.
double column_cost(std::span<const double> areas, const std::vector<std::vector<int>>& columns);

// The lower bound of the half-perimeter sum, 2 Σ √s_i (every rectangle a square), on the unit
// square.
double half_perimeter_bound(std::span<const double> areas);

}  // namespace hit::fpm
