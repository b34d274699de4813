#pragma once
// Internal to the layouts: a tree of the bounding boxes of a layout's blocks, so that "which
// processes hold part of this region" (owner(), procs_meeting()) does not scan every block of
// every process. Layouts that are not Cartesian products of per-axis pieces (dimBlocks,
// columns2d, hierarchical, a plug-in's own) answer with it.

#include <vector>

#include "hit/shape.hpp"

namespace hit::detail {

class BlockTree {
 public:
  // blocks(proc)[block] of a layout.
  struct Entry {
    int proc = 0;
    int block = 0;
  };

  // `blocks[p]`: the (non-empty) blocks of process p, all of rank `rank`.
  BlockTree(const std::vector<std::vector<Shape>>& blocks, int rank);

  // Appends to `out` every entry whose bounding box meets the box lo[k] <= i_k <= hi[k] (array
  // indices, `rank` values each). O(log n + answers) when the boxes are disjoint and not too
  // elongated; overlapping boxes (strided cyclic blocks all span the axis) visit more.
  void meeting(const index_t* lo, const index_t* hi, std::vector<Entry>& out) const;

 private:
  struct Node {
    int first = 0;  // entries [first, last)
    int last = 0;
    int left = -1;  // children; -1 for a leaf
    int right = -1;
  };
  // Builds the node over order[first, last) (indices into the entries) and returns its index.
  int build(std::vector<int>& order, int first, int last);
  bool box_meets(const index_t* box, const index_t* lo, const index_t* hi) const;

  int rank_ = 0;
  std::vector<Entry> entries_;       // in tree order once built
  std::vector<index_t> boxes_;       // per entry: rank_ lows, then rank_ highs
  std::vector<Node> nodes_;          // nodes_[0] is the root
  std::vector<index_t> node_boxes_;  // per node: the union of its entries' boxes, same form
};

}  // namespace hit::detail
