// Who a process exchanges data with, and how much, from the layouts alone: the peer finding of
// the comm builders (hit/comm/detail/comm_peers.hpp) and the per-process figures built on it
// (hit/comm/comm_traffic.hpp).
#include <algorithm>
#include <string>

#include "hit/comm/comm_traffic.hpp"
#include "hit/comm/detail/comm_peers.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {

void BlocksOf::meeting(const Shape& region, std::vector<int>& out) const {
  if (region.is_null() || region.empty()) return;
  if (layout != nullptr) {
    const std::vector<int> found = layout->procs_meeting(region);
    out.insert(out.end(), found.begin(), found.end());
    return;
  }
  if (lists == nullptr) return;
  // One region per process, given by the program: nothing to search but the list itself.
  for (std::size_t r = 0; r < lists->size(); ++r) {
    for (const Shape& s : (*lists)[r]) {
      if (!s.is_null() && !s.empty() && !s.intersect(region).empty()) {
        out.push_back(static_cast<int>(r));
        break;
      }
    }
  }
}

std::vector<int> intersection_peers(const std::vector<Shape>& my_from,
                                    const std::vector<Shape>& my_to, const BlocksOf& from,
                                    const BlocksOf& to) {
  std::vector<int> peers;
  for (const Shape& b : my_from) to.meeting(b, peers);
  for (const Shape& b : my_to) from.meeting(b, peers);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

void require_halo_width(index_t width) {
  if (width < 1) {
    throw Error(ErrorKind::invalid_argument,
                "halo width must be at least 1, got " + std::to_string(width));
  }
}

void require_halo_block(const Layout& layout, int rank, const Shape& block) {
  for (int k = 0; k < block.rank(); ++k) {
    if (block[k].stride() != 1) {
      throw Error(ErrorKind::shape, "halo needs contiguous blocks (stride 1); layout '" +
                                        layout.spec() + "' gives rank " + std::to_string(rank) +
                                        " the strided block " + block.str());
    }
  }
}

namespace {

// The neighbour's block must match this one on the other axes, and both must be at least
// `width` deep along `axis`, or the slabs would not fit the ghosts.
void require_aligned(int rank, const Shape& mine, int peer, const Shape& theirs, int axis,
                     index_t width) {
  for (int j = 0; j < mine.rank(); ++j) {
    if (j != axis && theirs.extent(j) != mine.extent(j)) {
      throw Error(ErrorKind::shape, "halo: the blocks of ranks " + std::to_string(rank) + " " +
                                        mine.str() + " and " + std::to_string(peer) + " " +
                                        theirs.str() + " are not aligned on axis " +
                                        std::to_string(j));
    }
  }
  if (mine[axis].size() < width || theirs.extent(axis) < width) {
    throw Error(ErrorKind::shape, "halo of width " + std::to_string(width) +
                                      " is wider than a block along axis " + std::to_string(axis) +
                                      " (blocks " + mine.str() + ", " + theirs.str() + ")");
  }
}

// The halo finds a block's neighbours by topology arithmetic: along topology axis k, the block
// next to it along shape axis k. A layout that splits a shape axis over another topology axis
// (`columns2d`, `dimBlocks:dim=1` on a line) has neighbours that arithmetic does not find: its
// faces would stay stale. Refused, on the side where it shows.
[[noreturn]] void refuse_unmatched(const Layout& layout, int rank, const Shape& mine,
                                   const std::string& why) {
  throw Error(ErrorKind::shape,
              "halo exchanges faces along shape axis k with the neighbours along topology axis "
              "k: layout '" +
                  layout.spec() + "' on " + layout.topology().str() + " gives rank " +
                  std::to_string(rank) + " the block " + mine.str() + ", " + why +
                  " (use a layout that splits shape axis k over topology axis k, such as blocks)");
}

// `theirs` lies next to `mine` on side `dir` of shape axis `axis`, or, wrapping around, at the
// other end of the shape.
bool adjacent(const Shape& shape, const Shape& mine, const Shape& theirs, int axis, int dir) {
  const Sig& own = mine[axis];
  const Sig& other = theirs[axis];
  const Sig& whole = shape[axis];
  if (dir > 0) {
    return other.begin() == own.last() + own.stride() ||
           (own.last() == whole.last() && other.begin() == whole.begin());
  }
  return other.last() + other.stride() == own.begin() ||
         (own.begin() == whole.begin() && other.last() == whole.last());
}

}  // namespace

std::vector<HaloFace> halo_faces(const Layout& layout, int rank, index_t width, bool corners,
                                 bool periodic) {
  std::vector<HaloFace> out;
  if (rank >= layout.procs() || !layout.active(rank)) return out;
  const Shape mine = layout.block(rank);
  const Shape& shape = layout.shape();
  const int axes = std::min(layout.topology().axes(), mine.rank());
  for (int k = axes; k < mine.rank(); ++k) {
    if (mine[k].size() != shape[k].size()) {
      refuse_unmatched(layout, rank, mine,
                       "which has neighbours along shape axis " + std::to_string(k) +
                           ", for which the topology has no axis");
    }
  }
  for (int k = 0; k < axes; ++k) {
    // Along axis k: the slab spans, on other axes j, the interior, or with corners the ghost
    // range of axes already exchanged (j < k), which forwards the diagonal cells.
    auto slab = [&](const Sig& along) {
      Shape s = mine.with_sig(k, along);
      for (int j = 0; j < k && corners; ++j) s = s.with_sig(j, mine[j].expand(width, width));
      return s;
    };
    const Sig& own = mine[k];
    const index_t st = own.stride();
    for (int dir : {-1, +1}) {
      const auto neighbour = layout.neighbor(rank, k, dir, periodic);
      const bool at_edge =
          dir < 0 ? own.begin() == shape[k].begin() : own.last() == shape[k].last();
      if (!neighbour) {
        if (!at_edge) {
          refuse_unmatched(layout, rank, mine,
                           "which has no neighbour " + std::string(dir < 0 ? "before" : "after") +
                               " it along topology axis " + std::to_string(k) +
                               " but does not reach the shape's edge along shape axis " +
                               std::to_string(k));
        }
        continue;
      }
      const Shape theirs = layout.block(*neighbour);
      if (!adjacent(shape, mine, theirs, k, dir)) {
        refuse_unmatched(layout, rank, mine,
                         "whose neighbour along topology axis " + std::to_string(k) + ", rank " +
                             std::to_string(*neighbour) + " with " + theirs.str() +
                             ", is not next to it along shape axis " + std::to_string(k));
      }
      require_aligned(rank, mine, *neighbour, theirs, k, width);
      // My boundary on side `dir` travels in direction `dir`; my ghost on side `dir` is filled
      // by data travelling in direction -dir.
      const Sig boundary = dir < 0 ? Sig(own.begin(), own.begin() + width * st, st)
                                   : Sig(own.last() - (width - 1) * st, own.last() + 1, st);
      const Sig ghost = dir < 0 ? Sig(own.begin() - width * st, own.begin(), st)
                                : Sig(own.last() + st, own.last() + st + width * st, st);
      out.push_back({k, dir, *neighbour, slab(boundary), slab(ghost)});
    }
  }
  return out;
}

}  // namespace hit::detail

namespace hit {

namespace {

constexpr const char* traffic_what = "the elements a plan moves";

// Per-peer sums, kept sorted by peer (a process has few peers).
class TrafficSum {
 public:
  void add(int peer, index_t sent, index_t received) {
    if (sent == 0 && received == 0) return;
    auto it = std::lower_bound(list_.begin(), list_.end(), peer,
                               [](const PeerTraffic& t, int p) { return t.peer < p; });
    if (it == list_.end() || it->peer != peer) it = list_.insert(it, PeerTraffic{peer, 0, 0});
    it->sent = checked_add(it->sent, sent, traffic_what);
    it->received = checked_add(it->received, received, traffic_what);
  }
  std::vector<PeerTraffic> take() { return std::move(list_); }

 private:
  std::vector<PeerTraffic> list_;
};

index_t met(const Shape& a, const Shape& b) {
  return a.intersect(b).size();
}

// The faces of `block` along shape axis `axis` of `shape`: the positions within `width` outside
// the block's first and last positions, clamped to the shape, spanning the block on the other
// axes. Empty faces are left out.
std::vector<Shape> faces_of(const Shape& shape, const Shape& block, int axis, index_t width) {
  std::vector<Shape> out;
  const Sig& whole = shape[axis];
  const index_t n = whole.size();
  const index_t first = whole.to_tile(block[axis].begin());
  const index_t last = whole.to_tile(block[axis].last());
  const index_t ranges[2][2] = {{std::max<index_t>(0, first - width), first},
                                {last + 1, std::min(n, checked_add(last + 1, width, "a face"))}};
  for (const auto& [lo, hi] : ranges) {
    if (hi > lo) out.push_back(block.with_sig(axis, whole.select_tile(lo, hi)));
  }
  return out;
}

// What another process's block must meet for one of its faces along `axis` to meet `block`:
// `block` itself on the other axes (a face spans its own block there), and along `axis` every
// position of the shape from `width` before the block's first index to `width` after its last
// (the other block's first or last index lies there: its face is within `width` of it).
Shape reach_of(const Shape& shape, const Shape& block, int axis, index_t width) {
  const Sig& whole = shape[axis];
  const index_t first = std::max<index_t>(0, whole.to_tile(block[axis].begin()) - width);
  const index_t last =
      std::min(whole.size() - 1, checked_add(whole.to_tile(block[axis].last()), width, "a face"));
  return block.with_sig(axis, whole.select_tile(first, last + 1));
}

}  // namespace

std::vector<PeerTraffic> redistribute_traffic(const Layout& from, const Layout& to, int rank) {
  if (!(from.shape() == to.shape())) {
    throw Error(ErrorKind::shape, "redistribute between layouts of different global shapes: " +
                                      from.shape().str() + " and " + to.shape().str());
  }
  const detail::BlocksOf from_side{&from, nullptr};
  const detail::BlocksOf to_side{&to, nullptr};
  const std::vector<Shape>& my_from = from_side(rank);
  const std::vector<Shape>& my_to = to_side(rank);
  TrafficSum sum;
  for (const int peer : detail::intersection_peers(my_from, my_to, from_side, to_side)) {
    index_t sent = 0;
    for (const Shape& a : my_from) {
      for (const Shape& b : to_side(peer)) sent = checked_add(sent, met(a, b), traffic_what);
    }
    index_t received = 0;
    for (const Shape& a : from_side(peer)) {
      for (const Shape& b : my_to) received = checked_add(received, met(a, b), traffic_what);
    }
    sum.add(peer, sent, received);
  }
  return sum.take();
}

std::vector<PeerTraffic> halo_traffic(const Layout& layout, int rank, const HaloOptions& options) {
  const index_t width = options.width;
  detail::require_halo_width(width);
  if (rank >= layout.procs() || !layout.active(rank)) return {};
  detail::require_halo_block(layout, rank, layout.block(rank));
  TrafficSum sum;
  for (const detail::HaloFace& f :
       detail::halo_faces(layout, rank, width, options.corners, options.periodic)) {
    sum.add(f.peer, f.send.size(), f.recv.size());
  }
  return sum.take();
}

std::vector<PeerTraffic> face_traffic(const Layout& layout, int rank, index_t width,
                                      FaceSides sides) {
  if (width < 0) {
    throw Error(ErrorKind::invalid_argument,
                "face width must be >= 0, got " + std::to_string(width));
  }
  TrafficSum sum;
  if (width == 0 || rank >= layout.procs()) return sum.take();
  const Shape& shape = layout.shape();
  const std::vector<Shape>& mine = layout.blocks(rank);
  for (int axis = 0; axis < shape.rank(); ++axis) {
    for (const Shape& block : mine) {
      // Received: what the others hold of my faces.
      for (const Shape& face : faces_of(shape, block, axis, width)) {
        for (const int peer : layout.procs_meeting(face)) {
          if (peer == rank) continue;
          for (const Shape& theirs : layout.blocks(peer)) sum.add(peer, 0, met(theirs, face));
        }
      }
      if (sides == FaceSides::received) continue;
      // Sent: what the faces of the processes near my block take of it.
      for (const int peer : layout.procs_meeting(reach_of(shape, block, axis, width))) {
        if (peer == rank) continue;
        for (const Shape& theirs : layout.blocks(peer)) {
          for (const Shape& face : faces_of(shape, theirs, axis, width)) {
            sum.add(peer, met(block, face), 0);
          }
        }
      }
    }
  }
  return sum.take();
}

index_t bytes_sent(const std::vector<PeerTraffic>& traffic, index_t element_bytes) {
  index_t total = 0;
  for (const PeerTraffic& t : traffic) {
    total = checked_add(total, checked_mul(t.sent, element_bytes, "the bytes a plan sends"),
                        "the bytes a plan sends");
  }
  return total;
}

}  // namespace hit
