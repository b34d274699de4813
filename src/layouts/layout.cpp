// The Layout value type: the blocks of every process, checked when made, and what follows from
// them (bounding boxes, extents, the active coordinates of each axis, predicted times). Owner and
// neighbour queries are in queries.cpp; hit::layout() by name in by_name.cpp; the plug-ins'
// building blocks in building_blocks.cpp.
#include "hit/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "block_tree.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "layout_checks.hpp"

namespace hit {

std::string detail::number_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

namespace {

Shape shape_from_extents(int rank, const std::vector<index_t>& extents) {
  Shape out = Shape::of_rank(rank);
  for (int k = 0; k < rank; ++k) {
    out = out.with_sig(k, Sig(0, extents[static_cast<std::size_t>(k)]));
  }
  return out;
}

}  // namespace

// ---- Layout -----------------------------------------------------------------------------------

Layout::Layout(Topology topology, Shape shape, std::string spec,
               std::vector<std::vector<Shape>> blocks, std::vector<double> predicted_time)
    : topology_(std::move(topology)),
      shape_(shape),
      spec_(std::move(spec)),
      predicted_(std::move(predicted_time)) {
  init(std::move(blocks), true);
}

Layout::Layout(Topology topology, Shape shape, Spec spec, std::vector<std::vector<Shape>> blocks,
               std::vector<double> predicted_time)
    : Layout(std::move(topology), shape, spec.str(), std::move(blocks), std::move(predicted_time)) {
  spec_value_ = std::move(spec);
}

Layout::Layout(Topology topology, Shape shape, Spec spec, std::vector<std::vector<Shape>> blocks,
               std::vector<double> predicted_time, std::vector<detail::AxisLookup> lookup)
    : topology_(std::move(topology)),
      shape_(shape),
      spec_(spec.str()),
      predicted_(std::move(predicted_time)),
      lookup_(std::move(lookup)),
      spec_value_(std::move(spec)) {
  init(std::move(blocks), false);
}

namespace {

// Throws the description of the first two overlapping blocks found by a sweep along axis 0.
template <class Fail>
void check_overlaps(const std::vector<std::vector<Shape>>& blocks, Fail&& fail) {
  struct Item {
    const Shape* block;
    std::size_t proc;
  };
  std::vector<Item> all;
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    for (const Shape& b : blocks[p]) all.push_back({&b, p});
  }
  std::sort(all.begin(), all.end(), [](const Item& x, const Item& y) {
    return (*x.block)[0].begin() < (*y.block)[0].begin();
  });
  std::size_t tests = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const index_t last = (*all[i].block)[0].last();
    for (std::size_t j = i + 1; j < all.size() && (*all[j].block)[0].begin() <= last; ++j) {
      if (++tests > detail::overlap_budget) return;
      // The bounds on the other axes first: two blocks of one band of a grid of rectangles
      // (columns2d, hierarchical) mostly lie apart there, and comparing bounds costs nothing
      // next to building the intersection.
      const Shape& a = *all[i].block;
      const Shape& b = *all[j].block;
      bool apart = false;
      for (int k = 1; k < a.rank() && !apart; ++k) {
        apart = a[k].last() < b[k].begin() || b[k].last() < a[k].begin();
      }
      if (apart) continue;
      if (!a.intersect(b).empty()) {
        throw fail("block " + all[i].block->str() + " of process " + std::to_string(all[i].proc) +
                   " overlaps block " + all[j].block->str() + " of process " +
                   std::to_string(all[j].proc));
      }
    }
  }
}

}  // namespace

void Layout::init(std::vector<std::vector<Shape>> blocks, bool check_pairs) {
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::plugin, "layout '" + spec_ + "' of " + shape_.str() + " on " +
                                        topology_.str() + ": " + why);
  };
  if (topology_.procs() < 1) throw fail("the topology has no processes");
  if (shape_.is_null()) throw fail("the shape is null");
  const auto procs = static_cast<std::size_t>(topology_.procs());
  if (blocks.size() != procs) {
    throw fail("the plug-in gave blocks for " + std::to_string(blocks.size()) + " processes, not " +
               std::to_string(procs));
  }
  blocks_.resize(procs);
  index_t total = 0;
  for (std::size_t p = 0; p < procs; ++p) {
    for (const Shape& b : blocks[p]) {
      if (b.is_null() || b.empty()) continue;
      if (b.rank() != shape_.rank() || !shape_.includes(b)) {
        throw fail("block " + b.str() + " of process " + std::to_string(p) +
                   " is not inside the shape");
      }
      if (!topology_.active(static_cast<int>(p))) {
        throw fail("process " + std::to_string(p) + " is outside the topology grid but has block " +
                   b.str());
      }
      // Overlapping blocks of a faulty plug-in could sum past any count.
      total = checked_add(total, b.size(), "the element count of layout '" + spec_ + "'");
      blocks_[p].push_back(b);
    }
  }
  if (total != shape_.size()) {
    throw fail("the blocks hold " + std::to_string(total) + " elements, the shape has " +
               std::to_string(shape_.size()));
  }
  if (check_pairs) check_overlaps(blocks_, fail);
  if (!predicted_.empty()) {
    if (predicted_.size() != procs) {
      throw fail("the plug-in predicted times for " + std::to_string(predicted_.size()) +
                 " processes, not " + std::to_string(procs));
    }
    for (double t : predicted_) {
      if (!std::isfinite(t) || t < 0)
        throw fail("predicted time " + detail::number_text(t) + " is not >= 0");
    }
  }
  bounding_.resize(procs);
  const auto rank = static_cast<std::size_t>(shape_.rank());
  std::vector<index_t> hi(rank, 0);
  std::vector<index_t> lo(rank, -1);
  for (std::size_t p = 0; p < procs; ++p) {
    for (const Shape& b : blocks_[p]) {
      bounding_[p] = bounding_[p].bounding(b);
      for (std::size_t k = 0; k < rank; ++k) {
        const index_t e = b.extent(static_cast<int>(k));
        hi[k] = std::max(hi[k], e);
        lo[k] = lo[k] < 0 ? e : std::min(lo[k], e);
      }
    }
  }
  for (auto& x : lo) x = std::max<index_t>(x, 0);
  max_extents_ = shape_from_extents(shape_.rank(), hi);
  min_extents_ = shape_from_extents(shape_.rank(), lo);
  active_coords_.resize(static_cast<std::size_t>(topology_.axes()));
  for (std::size_t p = 0; p < procs; ++p) {
    if (blocks_[p].empty()) continue;
    const Index c = topology_.coords(static_cast<int>(p));
    for (int k = 0; k < topology_.axes(); ++k) {
      active_coords_[static_cast<std::size_t>(k)].push_back(static_cast<int>(c[k]));
    }
  }
  for (auto& coords : active_coords_) {
    std::sort(coords.begin(), coords.end());
    coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
  }
  // Product layouts answer region queries from lookup_; the others need the tree.
  if (lookup_.empty()) tree_ = std::make_shared<detail::BlockTree>(blocks_, shape_.rank());
}

void Layout::check_proc(int proc) const {
  if (proc < 0 || proc >= procs()) {
    throw Error(ErrorKind::invalid_argument, "process " + std::to_string(proc) +
                                                 " is outside layout '" + spec_ + "' (0 to " +
                                                 std::to_string(procs() - 1) + ")");
  }
}

void Layout::check_axis(int axis) const {
  if (axis < 0 || axis >= topology_.axes()) {
    throw Error(ErrorKind::invalid_argument,
                "axis " + std::to_string(axis) + " is outside the topology of layout '" + spec_ +
                    "' (axes 0 to " + std::to_string(topology_.axes() - 1) + ")");
  }
}

const std::vector<Shape>& Layout::blocks(int proc) const {
  check_proc(proc);
  return blocks_[static_cast<std::size_t>(proc)];
}

Shape Layout::block(int proc) const {
  const auto& list = blocks(proc);
  if (list.empty()) return Shape();
  if (list.size() > 1) {
    throw Error(ErrorKind::invalid_argument,
                "process " + std::to_string(proc) + " has " + std::to_string(list.size()) +
                    " blocks in layout '" + spec_ + "'; use blocks() for layouts with several");
  }
  return list.front();
}

int Layout::active_count() const noexcept {
  int n = 0;
  for (const auto& list : blocks_) n += list.empty() ? 0 : 1;
  return n;
}

index_t Layout::elements(int proc) const {
  index_t n = 0;
  for (const Shape& b : blocks(proc)) n += b.size();
  return n;
}

Shape Layout::bounding(int proc) const {
  check_proc(proc);
  return bounding_[static_cast<std::size_t>(proc)];
}

Shape Layout::max_extents() const {
  return max_extents_;
}

Shape Layout::min_extents() const {
  return min_extents_;
}

double Layout::load(int proc) const {
  if (auto t = predicted_time(proc)) return *t;
  return static_cast<double>(elements(proc));
}

std::optional<double> Layout::predicted_time(int proc) const {
  check_proc(proc);
  if (predicted_.empty()) return std::nullopt;
  return predicted_[static_cast<std::size_t>(proc)];
}

std::string Layout::str() const {
  std::string out = "layout " + spec_ + " of " + shape_.str() + " on " + topology_.str() + "\n";
  for (std::size_t p = 0; p < blocks_.size(); ++p) {
    out += fmt::format("{} {}:", p, topology_.coords(static_cast<int>(p)).str());
    for (const Shape& b : blocks_[p]) out += fmt::format(" {}", b.str());
    if (!predicted_.empty()) out += fmt::format(" t={}", detail::number_text(predicted_[p]));
    out += '\n';
  }
  return out;
}

Shape LocalPart::block() const {
  if (blocks.empty()) return Shape();
  if (blocks.size() > 1) {
    throw Error(ErrorKind::invalid_argument,
                "rank " + std::to_string(rank) + " holds " + std::to_string(blocks.size()) +
                    " blocks of this layout; use local().blocks (one tile per block)");
  }
  return blocks.front();
}

index_t LocalPart::elements() const {
  index_t n = 0;
  for (const Shape& b : blocks) n += b.size();
  return n;
}

LocalPart Layout::part(int proc) const {
  LocalPart p;
  p.rank = proc;
  const int axes = topology_.axes();
  p.coords = Index::zeros(axes);
  if (proc < 0) {
    throw Error(ErrorKind::invalid_argument, "layout part of rank " + std::to_string(proc));
  }
  if (proc >= procs()) return p;  // outside the topology's grid: inactive
  if (proc < topology_.grid_size()) p.coords = topology_.coords(proc);
  p.blocks = blocks(proc);
  p.active = !p.blocks.empty();
  return p;
}

LocalPart Layout::local() const {
  return part(self_ >= 0 ? self_ : Environment::current().rank());
}

}  // namespace hit
