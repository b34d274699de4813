// Planning the arrays of a work-package run (array_plan.hpp): every rank says which rows of each
// array it holds, in one typed allgather per array, and every rank checks the same answer.

#include "packages/array_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {

namespace {

// What one rank holds of an array, as every rank needs to know it.
struct HeldRows {
  std::int64_t begin = 0;  // rows [begin, end) of the first axis
  std::int64_t end = 0;
  std::array<std::int64_t, 2 * (max_rank - 1)> later{};  // begin and end of each later axis
  std::int64_t rank = 0;  // the array's rank; 0: this rank holds none of it

  // Every rank holding rows must agree on the rest of the shape and the rank.
  bool same_row_shape(const HeldRows& other) const {
    return rank == other.rank && later == other.later;
  }
};

HeldRows held_rows(const Region& block) {
  HeldRows h;
  if (block.shape.is_null()) return h;
  const Shape& s = block.shape;
  h.begin = s[0].begin();
  h.end = s[0].end();
  for (int k = 1; k < s.rank(); ++k) {
    h.later[static_cast<std::size_t>(2 * (k - 1))] = s[k].begin();
    h.later[static_cast<std::size_t>(2 * (k - 1) + 1)] = s[k].end();
  }
  h.rank = s.rank();
  return h;
}

// Why rows of `block` cannot be moved as contiguous bytes, or empty when they can.
std::string layout_problem(const Region& block) {
  if (block.shape.is_null()) return {};
  const Shape& s = block.shape;
  const int r = s.rank();
  if (s[0].stride() != 1 || block.steps[static_cast<std::size_t>(r - 1)] != 1)
    return "its rows must have unit stride and its last axis must be contiguous";
  const std::string not_dense = "it must be a dense tile (no padding or ghost cells, unit strides)";
  index_t dense = 1;
  for (int k = r - 1; k >= 1; --k) {
    if (block.steps[static_cast<std::size_t>(k)] != dense || s[k].stride() != 1) return not_dense;
    dense *= s.extent(k);
  }
  if (r >= 2 && block.steps[0] != dense) return not_dense;
  return {};
}

// Whether `owners` (sorted by first row) cover `rows` exactly once.
bool covers_once(const std::vector<Segment>& owners, const Sig& rows) {
  index_t at = rows.begin();
  for (const Segment& s : owners) {
    if (s.begin != at || s.end <= at) return false;
    at = s.end;
  }
  return at >= rows.end();
}

// A package-local array: no rank holds any of it; each package's rows exist only in the slot
// computing it. The same on every rank (the same program's arrays).
ArrayPlan plan_local(std::size_t i, const PackageArray& array, const Sig& domain_rows) {
  ArrayPlan p;
  p.array = array;
  const Shape& s = array.block.shape;
  if (s.is_null() || !(s[0] == domain_rows)) {
    throw Error(ErrorKind::shape,
                fmt::format("work packages: package-local array {} ({}) must have the domain's "
                            "rows {} on its first axis",
                            i, s.is_null() ? std::string("null") : s.str(), domain_rows.str()));
  }
  index_t row_elems = 1;
  for (int k = 1; k < s.rank(); ++k) {
    p.row_axes.push_back(s[k]);
    row_elems = checked_mul(row_elems, s[k].size(), "row size");
  }
  p.row_bytes = static_cast<std::size_t>(
      checked_mul(row_elems, static_cast<index_t>(p.array.element_size), "row bytes"));
  return p;
}

ArrayPlan plan_array(Environment& env, std::size_t i, const PackageArray& array,
                     const Sig& domain_rows) {
  if (array.policy == PackagePolicy::local) return plan_local(i, array, domain_rows);
  ArrayPlan p;
  p.array = array;
  const Region& b = p.array.block;
  const bool reduced = p.array.policy == PackagePolicy::reduced_out;
  const bool partitioned = p.array.policy != PackagePolicy::replicated_in && !reduced;
  std::string why = layout_problem(b);
  if (why.empty() && p.array.policy == PackagePolicy::partitioned_in && p.array.reads != nullptr &&
      p.array.reads->axis(0).whole) {
    why = "its kernel reads whole columns of it (access pattern " + p.array.reads->str() +
          "): pass it whole with hit::replicated_in";
  }
  if (why.empty() && reduced && p.array.add == nullptr)
    why = "a reduced output needs numbers to sum";
  collectively(env.comm(), [&] {
    if (!why.empty()) {
      throw Error(
          ErrorKind::invalid_argument,
          fmt::format("work packages: array {} ({}) cannot be used: {}", i, b.shape.str(), why));
    }
  });
  const std::vector<HeldRows> all = allgather(held_rows(b), env.comm());
  const HeldRows* ref = nullptr;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const HeldRows& v = all[r];
    if (v.rank == 0) continue;
    if (ref == nullptr) ref = &v;
    if (!v.same_row_shape(*ref) || (reduced && (v.begin != ref->begin || v.end != ref->end))) {
      throw Error(
          ErrorKind::shape,
          fmt::format("work packages: array {} is not laid out by whole rows: ranks "
                      "hold blocks of different columns or ranks{}",
                      i, reduced ? " (a reduced output is the same whole array everywhere)" : ""));
    }
    if (partitioned && v.end > v.begin) p.owners.push_back({v.begin, v.end, static_cast<int>(r)});
  }
  if (ref == nullptr) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: array {} is null on every rank", i));
  }
  index_t row_elems = 1;
  for (int k = 1; k < ref->rank; ++k) {
    p.row_axes.emplace_back(ref->later[static_cast<std::size_t>(2 * (k - 1))],
                            ref->later[static_cast<std::size_t>(2 * (k - 1) + 1)]);
    row_elems = checked_mul(row_elems, p.row_axes.back().size(), "row size");
  }
  p.row_bytes = static_cast<std::size_t>(
      checked_mul(row_elems, static_cast<index_t>(p.array.element_size), "row bytes"));
  if (partitioned) {
    std::sort(p.owners.begin(), p.owners.end(),
              [](const Segment& x, const Segment& y) { return x.begin < y.begin; });
    if (!covers_once(p.owners, domain_rows)) {
      throw Error(ErrorKind::shape,
                  fmt::format("work packages: the blocks of partitioned array {} do not cover "
                              "rows {} of the domain exactly once",
                              i, domain_rows.str()));
    }
  } else if (b.shape.is_null()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: {} {} is null on rank {}",
                            reduced ? "reduced output" : "replicated input", i, env.rank()));
  }
  return p;
}

}  // namespace

std::vector<ArrayPlan> plan_arrays(Environment& env, const Sig& domain_rows,
                                   std::vector<PackageArray> arrays) {
  std::vector<ArrayPlan> plans;
  for (std::size_t i = 0; i < arrays.size(); ++i)
    plans.push_back(plan_array(env, i, arrays[i], domain_rows));
  return plans;
}

Shape array_rows(const ArrayPlan& plan, const Shape& pkg) {
  const auto later = static_cast<int>(plan.row_axes.size());
  Shape s = Shape::of_rank(later + 1).with_sig(0, pkg[0]);
  for (int k = 0; k < later; ++k) s = s.with_sig(k + 1, plan.row_axes[static_cast<std::size_t>(k)]);
  return s;
}

Shape with_halo(const ArrayPlan& plan, const Shape& pkg) {
  if (plan.array.policy != PackagePolicy::partitioned_in || plan.array.reads == nullptr ||
      plan.owners.empty())
    return pkg;
  const AccessPattern::Axis reach = plan.array.reads->axis(0);
  const Sig rows(plan.owners.front().begin, plan.owners.back().end);
  return pkg.with_sig(0, pkg[0].expand(reach.before, reach.after).intersect(rows));
}

index_t held_rows(const ArrayPlan& plan, index_t rows) {
  if (plan.array.policy != PackagePolicy::partitioned_in || plan.array.reads == nullptr)
    return rows;
  const AccessPattern::Axis reach = plan.array.reads->axis(0);
  return checked_add(rows, checked_add(reach.before, reach.after, "halo rows"), "rows held");
}

std::size_t whole_bytes(const ArrayPlan& plan) {
  const Shape& s = plan.array.block.shape;
  return s.is_null() ? 0 : static_cast<std::size_t>(s.extent(0)) * plan.row_bytes;
}

int sole_owner(const ArrayPlan& plan, const Sig& r) {
  for (const Segment& s : plan.owners) {
    if (s.begin <= r.begin() && r.end() <= s.end) return s.rank;
  }
  return -1;
}

}  // namespace hit::detail
