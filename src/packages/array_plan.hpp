#pragma once
// The arrays of a work-package run (hit/work_packages.hpp): who holds which rows of each array,
// checked and agreed by every rank, and where one package's rows of an array lie. Internal to
// src/packages/.

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/shape.hpp"
#include "hit/work_packages.hpp"

namespace hit::detail {

// Where the rows of a partitioned array live: one segment per rank holding some, by rows.
struct Segment {
  index_t begin = 0;  // rows [begin, end) of the array's first axis
  index_t end = 0;
  int rank = 0;
};

// A partitioned or replicated array of one run, with what the other ranks hold of it.
struct ArrayPlan {
  PackageArray array;
  std::size_t row_bytes = 0;  // bytes of one row (all axes after the first)
  std::vector<Sig> row_axes;  // the axes after the first (rank 1 arrays: none)
  std::vector<Segment> owners;
  std::shared_ptr<ResidentState> resident;  // replicated inputs on an accelerator
};

// Collective: checks every array (dense, laid out by whole rows, a partitioned one's blocks
// covering `domain_rows` exactly once) and finds who holds which rows. Error(invalid_argument) or
// Error(shape) naming the array.
std::vector<ArrayPlan> plan_arrays(Environment& env, const Sig& domain_rows,
                                   std::vector<PackageArray> arrays);

// The shape of a package's rows of an array: the package's rows, the array's later axes.
Shape array_rows(const ArrayPlan& plan, const Shape& pkg);
// The package `pkg` with the rows a partitioned input's kernel reads around it (its access
// pattern's first axis), within the array's rows; `pkg` itself for every other array.
Shape with_halo(const ArrayPlan& plan, const Shape& pkg);
// Rows a slot holds of `plan` for packages of `rows` rows (the halo rows on either side added).
index_t held_rows(const ArrayPlan& plan, index_t rows);
// A reduced output's bytes (the whole array).
std::size_t whole_bytes(const ArrayPlan& plan);
// The owner holding all of rows `r` of `plan`, or -1 when they are spread.
int sole_owner(const ArrayPlan& plan, const Sig& r);

}  // namespace hit::detail
