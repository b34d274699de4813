#include "hit/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "block_tree.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/physical_topology.hpp"

namespace hit {

namespace {

std::string number_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

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

Layout::Layout(Topology topology, Shape shape, std::string spec,
               std::vector<std::vector<Shape>> blocks, std::vector<double> predicted_time,
               std::vector<detail::AxisLookup> lookup)
    : topology_(std::move(topology)),
      shape_(shape),
      spec_(std::move(spec)),
      predicted_(std::move(predicted_time)),
      lookup_(std::move(lookup)) {
  init(std::move(blocks), false);
}

namespace {

// Most pairs of blocks the overlap sweep tests; past it the element count check stands alone.
constexpr std::size_t overlap_budget = 20'000'000;

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
      if (++tests > overlap_budget) return;
      if (!all[i].block->intersect(*all[j].block).empty()) {
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
        throw fail("predicted time " + number_text(t) + " is not >= 0");
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

std::string Layout::str() const {
  std::string out = "layout " + spec_ + " of " + shape_.str() + " on " + topology_.str() + "\n";
  for (std::size_t p = 0; p < blocks_.size(); ++p) {
    out += fmt::format("{} {}:", p, topology_.coords(static_cast<int>(p)).str());
    for (const Shape& b : blocks_[p]) out += fmt::format(" {}", b.str());
    if (!predicted_.empty()) out += fmt::format(" t={}", number_text(predicted_[p]));
    out += '\n';
  }
  return out;
}

// ---- registry and the by-name entry point -----------------------------------------------------

LayoutRegistry::LayoutRegistry(Environment& /*env*/) : Registry<LayoutPlugin>("layout") {
  detail::register_builtin_layouts(*this);
}

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

Layout layout(std::string_view spec_text, const Topology& topo, const Shape& shape,
              const LayoutOptions& options) {
  Environment& env = Environment::current();
  const std::string_view label = options.label;
  std::vector<DeviceBinding> devices = options.devices;
  std::string chosen(spec_text);
  std::string origin;
  if (!label.empty()) {
    const std::string key = "layout-" + std::string(label);
    if (auto value = env.config().get(key)) {
      chosen = *value;
      origin = "layout of '" + std::string(label) + "' set to '" + chosen + "' by --" + key +
               " or " + Config::env_name(key);
    }
  }
  try {
    const Spec spec = Spec::parse(chosen);
    const LayoutPlugin& plugin = env.extension<LayoutRegistry>().get(spec);
    if (topo.procs() < 1) {
      throw Error(ErrorKind::topology, "layout '" + spec.str() + "' needs a topology, got none");
    }
    if (shape.is_null()) {
      throw Error(ErrorKind::shape,
                  "layout '" + spec.str() + "' needs a shape, got the null shape");
    }
    if (!devices.empty() && devices.size() != static_cast<std::size_t>(topo.procs())) {
      throw Error(ErrorKind::device, "layout '" + spec.str() + "': the devices bind " +
                                         std::to_string(devices.size()) +
                                         " processes, the topology has " +
                                         std::to_string(topo.procs()));
    }
    std::vector<int> nodes;
    if (devices.empty() && topo.procs() <= env.size()) {
      // The run's own binding and nodes: a plug-in that balances by device then needs nothing
      // from the program. (Devices given, or a topology larger than the run, make a plan for
      // another run: its nodes are unknown.)
      const PhysicalTopology& physical = PhysicalTopology::of(env);
      devices = physical.bindings();
      devices.resize(static_cast<std::size_t>(topo.procs()));
      for (int p = 0; p < topo.procs(); ++p) {
        nodes.push_back(physical.ranks()[static_cast<std::size_t>(p)].node);
      }
    }
    LayoutRequest request{topo, shape, spec, std::move(devices), std::move(nodes)};
    require_block_count(request, static_cast<double>(topo.procs()));
    Layout result = plugin.make(request);
    result.self_ = env.rank();
    result.devices_ = request.devices;
    if (!(result.shape() == shape) || result.procs() != topo.procs()) {
      throw Error(ErrorKind::plugin, "layout plug-in '" + spec.name() + "' returned a layout of " +
                                         result.shape().str() + " over " +
                                         std::to_string(result.procs()) + " processes for " +
                                         shape.str() + " over " + std::to_string(topo.procs()));
    }
    return result;
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(e.kind(), origin + ": " + e.what());
  }
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

// ---- building blocks for plug-ins -------------------------------------------------------------

std::pair<index_t, index_t> block_range(index_t n, int parts, int part) {
  require(n >= 0, ErrorKind::invalid_argument,
          "cannot split " + std::to_string(n) + " elements: the count must be >= 0");
  require(parts >= 1, ErrorKind::invalid_argument,
          "cannot split into " + std::to_string(parts) + " parts: need at least 1");
  require(part >= 0 && part < parts, ErrorKind::invalid_argument,
          "part " + std::to_string(part) + " is outside 0.." + std::to_string(parts - 1));
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
    require(std::isfinite(w) && w >= 0, ErrorKind::invalid_argument,
            "weight " + std::to_string(i) + " is " + number_text(w) + ": weights must be >= 0");
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
            "part size " + std::to_string(s) + " is negative: sizes must be >= 0");
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
    for (std::size_t i = 0; i < list.size() && tests < overlap_budget; ++i) {
      // Contiguous runs can only meet their successor; strided pieces (one per coordinate for
      // cyclic) are tested against every later one.
      const std::size_t end = axis.intervals ? std::min(list.size(), i + 2) : list.size();
      for (std::size_t j = i + 1; j < end && ++tests < overlap_budget; ++j) {
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
  return Layout(topo, request.shape, request.spec.str(), std::move(blocks),
                std::move(predicted_time), std::move(lookup));
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
