#pragma once
// Brute-force checks of the properties every layout must have (shared by the layout tests).

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "hit/core/error.hpp"
#include "hit/layout.hpp"

namespace hit_test {

// The part size along topology axis `axis` of every coordinate (0 for a coordinate without data),
// read from the blocks of the processes at those coordinates (single-block layouts).
inline std::vector<hit::index_t> axis_parts(const hit::Layout& l, int axis, int shape_axis) {
  const hit::Topology& t = l.topology();
  std::vector<hit::index_t> parts(
      static_cast<std::size_t>(t.dims()[static_cast<std::size_t>(axis)]), 0);
  for (int p = 0; p < t.grid_size(); ++p) {
    if (!l.active(p)) continue;
    parts[static_cast<std::size_t>(t.coords(p)[axis])] = l.block(p).extent(shape_axis);
  }
  return parts;
}

// The processes with a block meeting `region`, by testing every block of every process.
inline std::vector<int> procs_meeting_by_scan(const hit::Layout& l, const hit::Shape& region) {
  std::vector<int> out;
  for (int p = 0; p < l.procs(); ++p) {
    for (const hit::Shape& b : l.blocks(p)) {
      if (!b.intersect(region).empty()) {
        out.push_back(p);
        break;
      }
    }
  }
  return out;
}

// Regions to ask procs_meeting about: every block, every block grown by one index on each side
// (past the shape's edges too), every other index of a block (strided), the first index of a
// block, the whole shape and a box straddling its middle.
inline std::vector<hit::Shape> probe_regions(const hit::Layout& l) {
  const hit::Shape& shape = l.shape();
  std::vector<hit::Shape> out;
  if (shape.empty()) return out;
  out.push_back(shape);
  hit::Shape middle = shape;
  for (int k = 0; k < shape.rank(); ++k) {
    const hit::Sig& s = shape[k];
    middle = middle.with_sig(k, s.select_tile(s.size() / 3, s.size() - s.size() / 3));
  }
  out.push_back(middle);
  for (int p = 0; p < l.procs(); ++p) {
    for (const hit::Shape& b : l.blocks(p)) {
      out.push_back(b);
      out.push_back(b.expand(1));
      hit::Shape every_other = b;
      for (int k = 0; k < b.rank(); ++k) {
        every_other = every_other.with_sig(k, b[k].select_tile(0, b[k].size(), 2));
      }
      out.push_back(every_other);
      hit::Shape first = b;
      for (int k = 0; k < b.rank(); ++k) first = first.with_sig(k, b[k].select_tile(0, 1));
      out.push_back(first);
    }
  }
  return out;
}

// procs_meeting (binary search or box tree) agrees with a scan of every block.
inline void expect_procs_meeting_by_scan(const hit::Layout& l) {
  for (const hit::Shape& region : probe_regions(l)) {
    EXPECT_EQ(l.procs_meeting(region), procs_meeting_by_scan(l, region)) << "region " << region;
  }
}

// Every index owned exactly once, owner() agreeing with the blocks, blocks inside the shape,
// element counts, active flags, extents and neighbours consistent. `context` names the case.
inline void expect_valid_layout(const hit::Layout& l, const std::string& context) {
  SCOPED_TRACE(context);
  const hit::Shape& shape = l.shape();
  const hit::Topology& topo = l.topology();
  ASSERT_EQ(l.procs(), topo.procs());

  hit::index_t total = 0;
  int active = 0;
  std::vector<hit::index_t> max_e(static_cast<std::size_t>(shape.rank()), 0);
  std::vector<hit::index_t> min_e(static_cast<std::size_t>(shape.rank()), -1);
  for (int p = 0; p < l.procs(); ++p) {
    hit::index_t mine = 0;
    for (const hit::Shape& b : l.blocks(p)) {
      EXPECT_FALSE(b.empty()) << "empty block of " << p;
      EXPECT_EQ(b.rank(), shape.rank());
      EXPECT_TRUE(shape.includes(b)) << b << " of " << p << " is not inside " << shape;
      mine += b.size();
      for (int k = 0; k < shape.rank(); ++k) {
        auto& hi = max_e[static_cast<std::size_t>(k)];
        auto& lo = min_e[static_cast<std::size_t>(k)];
        hi = std::max(hi, b.extent(k));
        lo = lo < 0 ? b.extent(k) : std::min(lo, b.extent(k));
      }
    }
    EXPECT_EQ(l.elements(p), mine) << "process " << p;
    EXPECT_EQ(l.active(p), mine > 0) << "process " << p;
    if (!topo.active(p)) {
      EXPECT_FALSE(l.active(p)) << "process " << p << " is outside the grid";
    }
    if (!l.predicted_time(p)) {
      EXPECT_EQ(l.load(p), static_cast<double>(mine));
    }
    total += mine;
    active += mine > 0 ? 1 : 0;
  }
  EXPECT_EQ(total, shape.size());
  EXPECT_EQ(l.active_count(), active);
  for (int k = 0; k < shape.rank(); ++k) {
    EXPECT_EQ(l.max_extents().extent(k), max_e[static_cast<std::size_t>(k)]) << "axis " << k;
    EXPECT_EQ(l.min_extents().extent(k),
              std::max<hit::index_t>(min_e[static_cast<std::size_t>(k)], 0))
        << "axis " << k;
  }

  // Every index owned exactly once, and owner() says by whom.
  bool all_ok = true;
  shape.for_each([&](const hit::Index& i) {
    int owners = 0;
    int who = -1;
    for (int p = 0; p < l.procs(); ++p) {
      for (const hit::Shape& b : l.blocks(p)) {
        if (b.contains(i)) {
          ++owners;
          who = p;
        }
      }
    }
    if (owners != 1 || l.owner(i) != who) {
      if (all_ok)
        ADD_FAILURE() << "index " << i << " has " << owners << " owners, owner() says "
                      << l.owner(i);
      all_ok = false;
    }
  });
  if (!shape.empty()) {
    hit::Index past = shape.first();
    past[0] = shape[0].end() + shape[0].stride();
    EXPECT_EQ(l.owner(past), -1);
    if (shape[0].stride() > 1) {
      hit::Index between = shape.first();
      between[0] += 1;
      EXPECT_EQ(l.owner(between), -1);
    }
  }

  expect_procs_meeting_by_scan(l);

  // Neighbours among the coordinates that hold data, computed independently.
  for (int axis = 0; axis < topo.axes(); ++axis) {
    std::set<int> coords;
    for (int p = 0; p < l.procs(); ++p) {
      if (l.active(p)) coords.insert(static_cast<int>(topo.coords(p)[axis]));
    }
    const std::vector<int> list(coords.begin(), coords.end());
    EXPECT_EQ(l.active_extent(axis), static_cast<int>(list.size()));
    EXPECT_EQ(l.active_coords(axis), list);
    const int n = static_cast<int>(list.size());
    for (int p = 0; p < l.procs(); ++p) {
      if (!l.active(p)) {
        EXPECT_EQ(l.neighbor(p, axis, 1, true), std::nullopt);
        continue;
      }
      const hit::Index c = topo.coords(p);
      const int at = static_cast<int>(std::find(list.begin(), list.end(), c[axis]) - list.begin());
      for (int offset : {-n - 1, -1, 1, 2, n}) {
        const int wrapped = ((at + offset) % n + n) % n;
        hit::Index q = c;
        q[axis] = list[static_cast<std::size_t>(wrapped)];
        const int expect = topo.proc_at(q);
        const auto got = l.neighbor(p, axis, offset, true);
        if (l.active(expect)) {
          EXPECT_EQ(got, expect) << "wrap neighbour of " << p << " axis " << axis << " offset "
                                 << offset;
        } else {
          EXPECT_EQ(got, std::nullopt);
        }
        const auto plain = l.neighbor(p, axis, offset, false);
        if (at + offset < 0 || at + offset >= n || !l.active(expect)) {
          EXPECT_EQ(plain, std::nullopt);
        } else {
          EXPECT_EQ(plain, expect);
        }
      }
    }
  }
}

}  // namespace hit_test
