#include "block_tree.hpp"

#include <algorithm>
#include <cstddef>

namespace hit::detail {

namespace {

// Entries per leaf: a few box tests are cheaper than another level of nodes.
constexpr int leaf_size = 8;

}  // namespace

BlockTree::BlockTree(const std::vector<std::vector<Shape>>& blocks, int rank) : rank_(rank) {
  const auto r = static_cast<std::size_t>(rank_);
  std::vector<Entry> entries;
  std::vector<index_t> boxes;
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    for (std::size_t b = 0; b < blocks[p].size(); ++b) {
      const Shape& block = blocks[p][b];
      if (block.is_null() || block.empty()) continue;
      entries.push_back({static_cast<int>(p), static_cast<int>(b)});
      for (int k = 0; k < rank_; ++k) boxes.push_back(block[k].begin());
      for (int k = 0; k < rank_; ++k) boxes.push_back(block[k].last());
    }
  }
  if (entries.empty()) return;
  entries_ = std::move(entries);
  boxes_ = std::move(boxes);
  std::vector<int> order(entries_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  build(order, 0, static_cast<int>(order.size()));
  // Leaves refer to positions of `order`: store the entries in that order.
  std::vector<Entry> sorted(entries_.size());
  std::vector<index_t> sorted_boxes(boxes_.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto from = static_cast<std::size_t>(order[i]);
    sorted[i] = entries_[from];
    std::copy_n(boxes_.begin() + static_cast<std::ptrdiff_t>(2 * r * from), 2 * r,
                sorted_boxes.begin() + static_cast<std::ptrdiff_t>(2 * r * i));
  }
  entries_ = std::move(sorted);
  boxes_ = std::move(sorted_boxes);
}

int BlockTree::build(std::vector<int>& order, int first, int last) {
  const auto r = static_cast<std::size_t>(rank_);
  const int self = static_cast<int>(nodes_.size());
  nodes_.push_back({first, last, -1, -1});
  const std::size_t at = node_boxes_.size();
  node_boxes_.resize(at + 2 * r);
  auto box_of = [&](int i) { return boxes_.data() + 2 * r * static_cast<std::size_t>(i); };
  std::copy_n(box_of(order[static_cast<std::size_t>(first)]), 2 * r, node_boxes_.begin() + at);
  for (int i = first + 1; i < last; ++i) {
    const index_t* box = box_of(order[static_cast<std::size_t>(i)]);
    for (std::size_t k = 0; k < r; ++k) {
      node_boxes_[at + k] = std::min(node_boxes_[at + k], box[k]);
      node_boxes_[at + r + k] = std::max(node_boxes_[at + r + k], box[r + k]);
    }
  }
  if (last - first <= leaf_size) return self;
  // Split at the median centre along the axis where the centres spread most: halves of equal
  // counts keep the depth at log2(n / leaf_size) whatever the shapes of the blocks. Centres are
  // compared doubled (lo + hi) in 128 bits, which cannot overflow.
  std::size_t axis = 0;
  int128 widest = -1;
  for (std::size_t k = 0; k < r; ++k) {
    int128 lo = 0;
    int128 hi = 0;
    for (int i = first; i < last; ++i) {
      const index_t* box = box_of(order[static_cast<std::size_t>(i)]);
      const int128 c = static_cast<int128>(box[k]) + box[r + k];
      lo = i == first ? c : std::min(lo, c);
      hi = i == first ? c : std::max(hi, c);
    }
    if (hi - lo > widest) {
      widest = hi - lo;
      axis = k;
    }
  }
  const int mid = first + (last - first) / 2;
  std::nth_element(order.begin() + first, order.begin() + mid, order.begin() + last,
                   [&](int a, int b) {
                     const index_t* x = box_of(a);
                     const index_t* y = box_of(b);
                     return static_cast<int128>(x[axis]) + x[r + axis] <
                            static_cast<int128>(y[axis]) + y[r + axis];
                   });
  const int left = build(order, first, mid);
  const int right = build(order, mid, last);
  nodes_[static_cast<std::size_t>(self)].left = left;
  nodes_[static_cast<std::size_t>(self)].right = right;
  return self;
}

bool BlockTree::box_meets(const index_t* box, const index_t* lo, const index_t* hi) const {
  for (int k = 0; k < rank_; ++k) {
    if (box[k] > hi[k] || box[rank_ + k] < lo[k]) return false;
  }
  return true;
}

void BlockTree::meeting(const index_t* lo, const index_t* hi, std::vector<Entry>& out) const {
  if (nodes_.empty()) return;
  const auto r = static_cast<std::size_t>(rank_);
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const Node& node = nodes_[static_cast<std::size_t>(stack.back())];
    const index_t* box = node_boxes_.data() + 2 * r * static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (!box_meets(box, lo, hi)) continue;
    if (node.left < 0) {
      for (int i = node.first; i < node.last; ++i) {
        if (box_meets(boxes_.data() + 2 * r * static_cast<std::size_t>(i), lo, hi)) {
          out.push_back(entries_[static_cast<std::size_t>(i)]);
        }
      }
      continue;
    }
    stack.push_back(node.right);
    stack.push_back(node.left);
  }
}

}  // namespace hit::detail
