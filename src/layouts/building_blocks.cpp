// The building blocks of layout plug-ins (hit/layout.hpp, "building blocks"): splitting an axis
// evenly, by sizes or by weights, the Cartesian-product layout with its per-axis lookup, and the
// checks plug-ins share (axes, block counts).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hit/core/error.hpp"
#include "hit/layout.hpp"
#include "layout_checks.hpp"

namespace hit {

void require_block_count(const LayoutRequest& request, double blocks) {
  if (blocks <= static_cast<double>(max_layout_blocks)) return;
  const double gigabytes = blocks * static_cast<double>(sizeof(Shape)) * 1e-9;
  const int procs = request.topology.procs();
  const std::string head = fmt::format("layout '{}' of {} over {} processes", request.spec.str(),
                                       request.shape.str(), procs);
  if (static_cast<double>(procs) >= blocks) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: every process keeps the blocks of every process (about {:.1f} GB "
                            "here); hitmap++ allows at most {} processes",
                            head, gigabytes, max_layout_blocks));
  }
  throw Error(ErrorKind::invalid_argument,
              fmt::format("{} makes {:.0f} blocks (about {:.1f} GB, kept on every process); "
                          "hitmap++ allows at most {} blocks: use larger blocks",
                          head, blocks, gigabytes, max_layout_blocks));
}

// ---- building blocks for plug-ins -------------------------------------------------------------

std::pair<index_t, index_t> block_range(index_t n, int parts, int part) {
  require(n >= 0, ErrorKind::invalid_argument, [&] {
    return "cannot split " + std::to_string(n) + " elements: the count must be >= 0";
  });
  require(parts >= 1, ErrorKind::invalid_argument,
          [&] { return "cannot split into " + std::to_string(parts) + " parts: need at least 1"; });
  require(part >= 0 && part < parts, ErrorKind::invalid_argument, [&] {
    return "part " + std::to_string(part) + " is outside 0.." + std::to_string(parts - 1);
  });
  const index_t base = n / parts;
  const index_t extra = n % parts;
  const index_t first = part * base + std::min<index_t>(part, extra);
  return {first, first + base + (part < extra ? 1 : 0)};
}

std::vector<index_t> parts_from_weights(std::span<const double> weights, index_t n) {
  require(n >= 0, ErrorKind::invalid_argument,
          "cannot split " + std::to_string(n) + " elements: the count must be >= 0");
  require(!weights.empty(), ErrorKind::invalid_argument, "cannot split by an empty weight list");
  long double sum = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    require(
        std::isfinite(w) && w >= 0, ErrorKind::invalid_argument,
        "weight " + std::to_string(i) + " is " + detail::number_text(w) + ": weights must be >= 0");
    sum += w;
  }
  require(sum > 0, ErrorKind::invalid_argument, "cannot split by weights that are all zero");
  const std::size_t m = weights.size();
  std::vector<index_t> parts(m);
  std::vector<long double> remainder(m);
  index_t given = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const long double share = static_cast<long double>(n) * weights[i] / sum;
    const long double whole = std::floor(share);
    parts[i] = static_cast<index_t>(whole);
    remainder[i] = share - whole;
    given += parts[i];
  }
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest remainder first, ties to the lower index.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; given < n; i = (i + 1) % m, ++given) ++parts[order[i]];
  // Rounding of the shares can overshoot by an element in pathological cases: take it back from
  // the smallest remainders, never making a part negative (some part is positive: given > n >= 0).
  while (given > n) {
    for (auto it = order.rbegin(); it != order.rend() && given > n; ++it) {
      if (parts[*it] > 0) {
        --parts[*it];
        --given;
      }
    }
  }
  return parts;
}

AxisPieces block_pieces(const Sig& sig, int parts) {
  AxisPieces out(static_cast<std::size_t>(parts));
  for (int c = 0; c < parts; ++c) {
    const auto [first, last] = block_range(sig.size(), parts, c);
    if (last > first) out[static_cast<std::size_t>(c)].push_back(sig.select_tile(first, last));
  }
  return out;
}

AxisPieces sized_pieces(const Sig& sig, const std::vector<index_t>& sizes) {
  index_t total = 0;
  for (index_t s : sizes) {
    require(s >= 0, ErrorKind::invalid_argument,
            [&] { return "part size " + std::to_string(s) + " is negative: sizes must be >= 0"; });
    total += s;
  }
  require(total == sig.size(), ErrorKind::invalid_argument,
          "part sizes sum to " + std::to_string(total) + ", the axis " + sig.str() + " has " +
              std::to_string(sig.size()) + " elements");
  AxisPieces out(sizes.size());
  index_t first = 0;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    if (sizes[c] > 0) out[c].push_back(sig.select_tile(first, first + sizes[c]));
    first += sizes[c];
  }
  return out;
}

void require_layout_axes(const LayoutRequest& request) {
  const int have = request.shape.rank();
  const int need = request.topology.axes();
  if (have < need) {
    throw Error(ErrorKind::shape, "layout '" + request.spec.str() + "': shape " +
                                      request.shape.str() + " has " + std::to_string(have) +
                                      (have == 1 ? " axis" : " axes") + ", topology " +
                                      request.topology.str() + " has " + std::to_string(need) +
                                      " (a shape needs at least as many axes as the topology)");
  }
}

Layout product_layout(const LayoutRequest& request, const std::vector<AxisPieces>& pieces,
                      std::vector<double> predicted_time) {
  require_layout_axes(request);
  const Topology& topo = request.topology;
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::plugin, "layout '" + request.spec.str() + "': " + why);
  };
  if (pieces.size() != static_cast<std::size_t>(topo.axes())) {
    throw fail("pieces for " + std::to_string(pieces.size()) + " axes, the topology has " +
               std::to_string(topo.axes()));
  }
  for (int k = 0; k < topo.axes(); ++k) {
    if (pieces[static_cast<std::size_t>(k)].size() != static_cast<std::size_t>(topo.dim(k))) {
      throw fail("axis " + std::to_string(k) + " has pieces for " +
                 std::to_string(pieces[static_cast<std::size_t>(k)].size()) +
                 " coordinates, the topology has " + std::to_string(topo.dim(k)));
    }
  }
  double block_count = 1;
  for (const AxisPieces& axis : pieces) {
    double along = 0;
    for (const auto& coord : axis) along += static_cast<double>(coord.size());
    block_count *= std::max(along, 1.0);
  }
  require_block_count(request, block_count);
  // Along each axis the pieces must cover the shape axis exactly once; then so do their products,
  // and the blocks need no pairwise test.
  std::vector<detail::AxisLookup> lookup(pieces.size());
  for (int k = 0; k < topo.axes(); ++k) {
    const Sig& whole = request.shape[k];
    auto& axis = lookup[static_cast<std::size_t>(k)];
    index_t total = 0;
    axis.intervals = true;
    const auto& coords = pieces[static_cast<std::size_t>(k)];
    for (std::size_t c = 0; c < coords.size(); ++c) {
      for (const Sig& piece : coords[c]) {
        if (piece.empty()) continue;
        if (!whole.includes(piece)) {
          throw fail("piece " + piece.str() + " of coordinate " + std::to_string(c) + " on axis " +
                     std::to_string(k) + " is not inside " + whole.str());
        }
        total += piece.size();
        axis.intervals = axis.intervals && (piece.size() == 1 || piece.stride() == whole.stride());
        axis.pieces.emplace_back(piece, static_cast<int>(c));
      }
    }
    if (total != whole.size()) {
      throw fail("the pieces of axis " + std::to_string(k) + " hold " + std::to_string(total) +
                 " indices, " + whole.str() + " has " + std::to_string(whole.size()));
    }
    std::sort(axis.pieces.begin(), axis.pieces.end(),
              [](const auto& x, const auto& y) { return x.first.begin() < y.first.begin(); });
    const auto& list = axis.pieces;
    std::size_t tests = 0;
    for (std::size_t i = 0; i < list.size() && tests < detail::overlap_budget; ++i) {
      // Contiguous runs can only meet their successor; strided pieces (one per coordinate for
      // cyclic) are tested against every later one.
      const std::size_t end = axis.intervals ? std::min(list.size(), i + 2) : list.size();
      for (std::size_t j = i + 1; j < end && ++tests < detail::overlap_budget; ++j) {
        if (!list[i].first.intersect(list[j].first).empty()) {
          throw fail("pieces " + list[i].first.str() + " and " + list[j].first.str() + " of axis " +
                     std::to_string(k) + " overlap");
        }
      }
    }
  }
  std::vector<std::vector<Shape>> blocks(static_cast<std::size_t>(topo.procs()));
  for (int p = 0; p < topo.grid_size(); ++p) {
    const Index c = topo.coords(p);
    std::vector<const std::vector<Sig>*> lists;
    bool empty = false;
    for (int k = 0; k < topo.axes(); ++k) {
      const auto& list = pieces[static_cast<std::size_t>(k)][static_cast<std::size_t>(c[k])];
      empty = empty || list.empty();
      lists.push_back(&list);
    }
    if (empty) continue;
    // Row-major walk over the combinations of one piece per axis.
    std::vector<std::size_t> at(lists.size(), 0);
    auto& out = blocks[static_cast<std::size_t>(p)];
    for (;;) {
      Shape b = request.shape;
      for (std::size_t k = 0; k < lists.size(); ++k) {
        b = b.with_sig(static_cast<int>(k), (*lists[k])[at[k]]);
      }
      out.push_back(b);
      int k = static_cast<int>(lists.size()) - 1;
      while (k >= 0 &&
             ++at[static_cast<std::size_t>(k)] == lists[static_cast<std::size_t>(k)]->size()) {
        at[static_cast<std::size_t>(k)] = 0;
        --k;
      }
      if (k < 0) break;
    }
  }
  return Layout(topo, request.shape, request.spec, std::move(blocks), std::move(predicted_time),
                std::move(lookup));
}

Layout layout_from_parts(const LayoutRequest& request, int axis, const std::vector<index_t>& parts,
                         std::vector<double> predicted_time) {
  require_layout_axes(request);
  const Topology& topo = request.topology;
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::plugin, "layout '" + request.spec.str() + "': " + why);
  };
  if (axis < 0 || axis >= topo.axes()) {
    throw fail("axis " + std::to_string(axis) + " is outside topology " + topo.str() +
               " (axes 0 to " + std::to_string(topo.axes() - 1) + ")");
  }
  if (parts.size() != static_cast<std::size_t>(topo.dim(axis))) {
    throw fail(std::to_string(parts.size()) + " part sizes for the " +
               std::to_string(topo.dim(axis)) + " coordinates of topology axis " +
               std::to_string(axis));
  }
  std::vector<AxisPieces> pieces;
  for (int k = 0; k < topo.axes(); ++k) {
    if (k == axis) {
      try {
        pieces.push_back(sized_pieces(request.shape[k], parts));
      } catch (const Error& e) {
        throw fail(e.what());
      }
    } else {
      pieces.push_back(block_pieces(request.shape[k], topo.dim(k)));
    }
  }
  const auto procs = static_cast<std::size_t>(topo.procs());
  if (!predicted_time.empty() && predicted_time.size() != procs) {
    if (predicted_time.size() != parts.size()) {
      throw fail(std::to_string(predicted_time.size()) +
                 " predicted times: give one per process (" + std::to_string(procs) +
                 ") or one per coordinate of axis " + std::to_string(axis) + " (" +
                 std::to_string(parts.size()) + ")");
    }
    std::vector<double> per_proc(procs, 0.0);
    for (int p = 0; p < topo.grid_size(); ++p) {
      const auto c = static_cast<std::size_t>(topo.coords(p)[axis]);
      if (parts[c] > 0) per_proc[static_cast<std::size_t>(p)] = predicted_time[c];
    }
    predicted_time = std::move(per_proc);
  }
  return product_layout(request, pieces, std::move(predicted_time));
}

Layout layout_from_weights(const LayoutRequest& request, int axis,
                           std::span<const double> weights) {
  require_layout_axes(request);
  if (axis < 0 || axis >= request.topology.axes()) {
    throw Error(ErrorKind::plugin, "layout '" + request.spec.str() + "': axis " +
                                       std::to_string(axis) + " is outside topology " +
                                       request.topology.str());
  }
  std::vector<index_t> parts;
  try {
    parts = parts_from_weights(weights, request.shape.extent(axis));
  } catch (const Error& e) {
    throw Error(ErrorKind::plugin, "layout '" + request.spec.str() + "': " + e.what());
  }
  return layout_from_parts(request, axis, parts);
}

}  // namespace hit
