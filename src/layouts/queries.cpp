// Questions any rank answers about a Layout without communicating: who owns an index, which
// processes meet a region (by per-axis lookup for product layouts, by the block tree for the
// others), and the neighbours among the active coordinates of an axis.
#include <algorithm>
#include <array>

#include "block_tree.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"
#include "hit/layout.hpp"

namespace hit {

int Layout::owner(const Index& index) const {
  if (!shape_.contains(index)) return -1;
  if (!lookup_.empty()) return owner_by_lookup(index);
  std::vector<detail::BlockTree::Entry> found;
  std::array<index_t, max_rank> at{};
  for (int k = 0; k < index.rank(); ++k) at[static_cast<std::size_t>(k)] = index[k];
  tree_->meeting(at.data(), at.data(), found);
  for (const auto& e : found) {
    const Shape& b = blocks_[static_cast<std::size_t>(e.proc)][static_cast<std::size_t>(e.block)];
    if (b.contains(index)) return e.proc;
  }
  throw Error(ErrorKind::internal, "layout '" + spec_ + "': no process owns index " + index.str());
}

int Layout::owner_by_lookup(const Index& index) const {
  Index coords = Index::zeros(topology_.axes());
  for (int k = 0; k < topology_.axes(); ++k) {
    const auto& axis = lookup_[static_cast<std::size_t>(k)];
    const index_t i = index[k];
    int found = -1;
    if (axis.intervals) {
      // The last piece beginning at or before i is the only one that can hold it.
      const auto it = std::upper_bound(
          axis.pieces.begin(), axis.pieces.end(), i,
          [](index_t x, const std::pair<Sig, int>& piece) { return x < piece.first.begin(); });
      if (it != axis.pieces.begin() && std::prev(it)->first.contains(i)) {
        found = std::prev(it)->second;
      }
    } else {
      for (const auto& [piece, coord] : axis.pieces) {
        if (piece.contains(i)) {
          found = coord;
          break;
        }
      }
    }
    if (found < 0) {
      throw Error(ErrorKind::internal,
                  "layout '" + spec_ + "': no process owns index " + index.str());
    }
    coords[k] = found;
  }
  return topology_.proc_at(coords);
}

std::vector<int> Layout::procs_meeting(const Shape& region) const {
  if (region.rank() != shape_.rank()) {
    throw Error(ErrorKind::shape, "layout '" + spec_ + "' of " + shape_.str() +
                                      ": which processes meet a region of " +
                                      std::to_string(region.rank()) + " axes, " + region.str());
  }
  std::vector<int> out;
  if (region.empty()) return out;
  if (!lookup_.empty()) {
    meeting_by_lookup(region, out);
  } else {
    meeting_by_tree(region, out);
  }
  return out;
}

void Layout::meeting_by_lookup(const Shape& region, std::vector<int>& out) const {
  // The shape axes past the topology's are whole in every block.
  for (int k = topology_.axes(); k < shape_.rank(); ++k) {
    if (region[k].intersect(shape_[k]).empty()) return;
  }
  // Along each topology axis, the coordinates with a piece meeting the region. Contiguous pieces
  // are disjoint runs sorted by begin, so their last indices ascend too and the candidates are
  // one range found by binary search; strided ones (cyclic) interleave and are all tested, which
  // is one axis's coordinates, not every process. A process meets the region exactly when each
  // axis of one of its blocks does, i.e. when its coordinate is a candidate on every axis.
  const int axes = topology_.axes();
  std::vector<std::vector<int>> coords(static_cast<std::size_t>(axes));
  for (int k = 0; k < axes; ++k) {
    const Sig& want = region[k];
    const auto& axis = lookup_[static_cast<std::size_t>(k)];
    const auto& pieces = axis.pieces;
    auto it = !axis.intervals
                  ? pieces.begin()
                  : std::partition_point(pieces.begin(), pieces.end(), [&](const auto& piece) {
                      return piece.first.last() < want.begin();
                    });
    auto& list = coords[static_cast<std::size_t>(k)];
    for (; it != pieces.end() && it->first.begin() <= want.last(); ++it) {
      if (!it->first.intersect(want).empty()) list.push_back(it->second);
    }
    if (list.empty()) return;
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  // Every combination of candidate coordinates, last axis fastest.
  std::vector<std::size_t> at(static_cast<std::size_t>(axes), 0);
  Index c = Index::zeros(axes);
  for (;;) {
    for (int k = 0; k < axes; ++k) {
      c[k] = coords[static_cast<std::size_t>(k)][at[static_cast<std::size_t>(k)]];
    }
    out.push_back(topology_.proc_at(c));
    int k = axes - 1;
    while (k >= 0 &&
           ++at[static_cast<std::size_t>(k)] == coords[static_cast<std::size_t>(k)].size()) {
      at[static_cast<std::size_t>(k)] = 0;
      --k;
    }
    if (k < 0) break;
  }
  std::sort(out.begin(), out.end());
}

void Layout::meeting_by_tree(const Shape& region, std::vector<int>& out) const {
  std::array<index_t, max_rank> lo{};
  std::array<index_t, max_rank> hi{};
  for (int k = 0; k < region.rank(); ++k) {
    lo[static_cast<std::size_t>(k)] = region[k].begin();
    hi[static_cast<std::size_t>(k)] = region[k].last();
  }
  std::vector<detail::BlockTree::Entry> found;
  tree_->meeting(lo.data(), hi.data(), found);
  // Bounding boxes meet; strided blocks or regions may still miss each other.
  for (const auto& e : found) {
    const Shape& b = blocks_[static_cast<std::size_t>(e.proc)][static_cast<std::size_t>(e.block)];
    if (!b.intersect(region).empty()) out.push_back(e.proc);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

std::optional<int> Layout::neighbor(int proc, int axis, int offset, bool wrap) const {
  check_proc(proc);
  check_axis(axis);
  if (!active(proc)) return std::nullopt;
  const auto& coords = active_coords_[static_cast<std::size_t>(axis)];
  Index c = topology_.coords(proc);
  const auto it = std::lower_bound(coords.begin(), coords.end(), static_cast<int>(c[axis]));
  const auto n = static_cast<index_t>(coords.size());
  index_t target = (it - coords.begin()) + static_cast<index_t>(offset);
  if (wrap) {
    target = detail::floor_mod(target, n);
  } else if (target < 0 || target >= n) {
    return std::nullopt;
  }
  c[axis] = coords[static_cast<std::size_t>(target)];
  const int q = topology_.proc_at(c);
  if (!active(q)) return std::nullopt;
  return q;
}

int Layout::active_extent(int axis) const {
  return static_cast<int>(active_coords(axis).size());
}

const std::vector<int>& Layout::active_coords(int axis) const {
  check_axis(axis);
  return active_coords_[static_cast<std::size_t>(axis)];
}

}  // namespace hit
