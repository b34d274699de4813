#pragma once
// Layouts (first-level mapping, docs/layouts.md): which blocks of a global Shape every logical
// process owns, computed by a layout plug-in chosen by name (`blocks`, `cyclic`,
// `weighted:w=1,2`, ...).
//
// A Layout is a value type computed identically on every rank from the same inputs: it holds the
// blocks of *every* process, so any rank can answer owner(), neighbour and size questions without
// communicating.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hit/core/registry.hpp"
#include "hit/core/setting.hpp"
#include "hit/core/spec.hpp"
#include "hit/layouts/candidate_context.hpp"
#include "hit/shape.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_binding.hpp"

namespace hit {

class Environment;
struct LayoutOptions;

// What a layout plug-in gets: the virtual topology, the global shape, its own spec (name and
// checked parameters) and the device of every rank (empty when unknown: treat as homogeneous).
struct LayoutRequest {
  Topology topology;
  Shape shape;
  Spec spec;
  std::vector<DeviceBinding> devices;
  // The node of every process (real shared-memory nodes, or HIT_NODES' emulated ones), known
  // when hit::layout() takes the run's own devices; empty otherwise (a plan for another run).
  std::vector<int> nodes;
};

// How one topology axis divides the shape axis of the same number: pieces[c] lists the Sigs (of
// that shape axis, in its array indices) given to topology coordinate c; an empty list gives it
// nothing.
using AxisPieces = std::vector<std::vector<Sig>>;

namespace detail {
// How owner() finds the coordinate along one axis of a product layout.
struct AxisLookup {
  std::vector<std::pair<Sig, int>> pieces;  // (piece, coordinate), sorted by begin
  bool intervals = false;                   // pieces are contiguous runs: binary search them
};
// The bounding boxes of the blocks of a layout that is not a product of per-axis pieces
// (src/layouts/block_tree.hpp).
class BlockTree;
}  // namespace detail

// What one process holds of a layout: Layout::local() for the calling process, part(p) for any.
// An inactive process (no block, or outside the topology's grid) has no blocks, a null block()
// and zero coordinates, so code written for the active ones runs unchanged on it.
struct LocalPart {
  int rank = 0;
  bool active = false;
  Index coords;  // topology coordinates
  std::vector<Shape> blocks;
  // The single block; the null Shape when inactive; Error(invalid_argument) when several.
  Shape block() const;
  index_t elements() const;
};

class Layout {
 public:
  Layout() = default;
  // `blocks[p]`: the blocks of process p (one list per process of `topology`; empty shapes are
  // dropped, an empty list makes p inactive). `predicted_time`: empty, or one value per process.
  // Checks the result: blocks inside `shape`, of its rank, together covering it exactly once
  // (disjointness by a sweep over the blocks, up to a budget of pair tests), none on a process
  // outside the topology grid. Throws Error(plugin) naming `spec` otherwise.
  Layout(Topology topology, Shape shape, std::string spec, std::vector<std::vector<Shape>> blocks,
         std::vector<double> predicted_time = {});
  // The same from the spec as a value (a plug-in passes request.spec, or the spec it completed):
  // spec_value() is then that value, with no text parsed.
  Layout(Topology topology, Shape shape, Spec spec, std::vector<std::vector<Shape>> blocks,
         std::vector<double> predicted_time = {});

  // The topology the blocks are laid on (for dimBlocks its 1-D view), the global shape and the
  // canonical spec text that made the layout.
  const Topology& topology() const noexcept { return topology_; }
  const Shape& shape() const noexcept { return shape_; }
  std::string spec() const { return spec_; }
  // The same spec as a value, when hit::layout() made the layout or a plug-in gave it as one
  // (else empty): read its parameters, or change one and lay the shape out again, without
  // parsing text.
  const Spec& spec_value() const noexcept { return spec_value_; }
  // What the program's code asked for, when hit::layout() was given a Setting that the command
  // line or a HIT_* variable overrode (then set_by() names which); else spec() again. A layout
  // made otherwise reports its spec and no source.
  const std::string& requested() const noexcept { return requested_.empty() ? spec_ : requested_; }
  const std::string& set_by() const noexcept { return set_by_; }
  int procs() const noexcept { return topology_.procs(); }
  // The device of every process the layout was made for (hit::layout() fills it; empty when
  // unknown).
  const std::vector<DeviceBinding>& devices() const noexcept { return devices_; }

  // What the calling process holds: the process hit::layout() was called on (the rank of its
  // Environment), else Environment::current()'s rank. Any rank of the run is accepted, also one
  // outside the topology's grid (inactive).
  LocalPart local() const;
  LocalPart part(int proc) const;

  // The blocks of `proc`, in the order the plug-in gave them (empty for an inactive proc).
  const std::vector<Shape>& blocks(int proc) const;
  // The single block of `proc`; the null Shape when it has none; Error(invalid_argument) when it
  // has several (use blocks()).
  Shape block(int proc) const;
  bool active(int proc) const { return !blocks(proc).empty(); }
  int active_count() const noexcept;
  index_t elements(int proc) const;
  // The smallest shape containing all blocks of `proc` (null when inactive).
  Shape bounding(int proc) const;
  // The process owning `index`; -1 when `index` is outside shape().
  int owner(const Index& index) const;
  // The processes holding a block that meets `region` (array indices, the shape's rank; strided
  // regions too), ascending: the peers of a redistribution or of a halo face. Neither owner() nor
  // this scans every block. A product layout (blocks, weighted, fpm, blocksLB, blockCyclic,
  // cyclic) answers axis by axis: a binary search of contiguous pieces, a pass over one axis's
  // coordinates for strided (cyclic) ones. Any other layout (dimBlocks, columns2d, hierarchical,
  // a plug-in's own) searches a tree of its blocks' bounding boxes built with it. O(log P +
  // answers) for one box per process. Error(shape) for a region of another rank.
  std::vector<int> procs_meeting(const Shape& region) const;

  // [0:e0][0:e1]... with e_k the largest (smallest) extent along axis k over all blocks: pass
  // max_extents() as the padded size of a tile so every block of this layout fits one buffer size.
  // Of rank shape().rank() and extents 0 when no process has a block.
  Shape max_extents() const;
  Shape min_extents() const;

  // The work given to `proc`: its predicted time when the plug-in predicted one, else elements.
  double load(int proc) const;
  std::optional<double> predicted_time(int proc) const;

  // Along topology axis `axis`, the process `offset` steps from `proc` among the coordinates that
  // hold data (Hitmap's "actives"): with `wrap` cyclically over them, without it nullopt past the
  // last/first one. nullopt when `proc` or the process found is inactive.
  std::optional<int> neighbor(int proc, int axis, int offset, bool wrap) const;
  // How many coordinates along topology axis `axis` have an active process.
  int active_extent(int axis) const;
  // The coordinates along `axis` that have an active process, ascending.
  const std::vector<int>& active_coords(int axis) const;

  // A canonical text of the whole layout (topology, shape, spec, every process's blocks and
  // predictions): equal texts mean equal layouts. One line per process.
  std::string str() const;

  friend bool operator==(const Layout& a, const Layout& b) {
    return a.topology_ == b.topology_ && a.shape_ == b.shape_ && a.spec_ == b.spec_ &&
           a.blocks_ == b.blocks_ && a.predicted_ == b.predicted_;
  }

 private:
  // product_layout validates its pieces axis by axis (cheaper than block pairs) and leaves an
  // index by axis so that owner() takes a binary search instead of a scan of every block.
  friend Layout product_layout(const LayoutRequest& request, const std::vector<AxisPieces>& pieces,
                               std::vector<double> predicted_time);
  Layout(Topology topology, Shape shape, Spec spec, std::vector<std::vector<Shape>> blocks,
         std::vector<double> predicted_time, std::vector<detail::AxisLookup> lookup);
  void init(std::vector<std::vector<Shape>> blocks, bool check_pairs);
  void check_proc(int proc) const;
  void check_axis(int axis) const;
  int owner_by_lookup(const Index& index) const;
  void meeting_by_lookup(const Shape& region, std::vector<int>& out) const;
  void meeting_by_tree(const Shape& region, std::vector<int>& out) const;

  Topology topology_;
  Shape shape_;
  std::string spec_;
  std::vector<std::vector<Shape>> blocks_;
  std::vector<double> predicted_;
  std::vector<Shape> bounding_;                  // per proc
  std::vector<std::vector<int>> active_coords_;  // per topology axis
  Shape max_extents_;
  Shape min_extents_;
  std::vector<detail::AxisLookup> lookup_;  // per topology axis, for product layouts only
  // For the layouts without lookup_; shared by copies (it never changes).
  std::shared_ptr<const detail::BlockTree> tree_;
  int self_ = -1;  // the process local() describes; -1: Environment::current()'s rank
  std::vector<DeviceBinding> devices_;
  Spec spec_value_;
  std::string requested_;  // the code's spec when an override replaced it
  std::string set_by_;     // the option or variable that did
  friend Layout layout(const Spec& spec, const Topology& topo, const Shape& shape,
                       const LayoutOptions& options);
  friend Layout layout(const Setting& spec, const Topology& topo, const Shape& shape,
                       const LayoutOptions& options);
};

// A layout plug-in: maps a request to a Layout. Must be deterministic (same result on every rank).
class LayoutPlugin {
 public:
  virtual ~LayoutPlugin() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<ParamInfo> params() const = 0;
  // `request.spec` has been checked against params().
  virtual Layout make(const LayoutRequest& request) const = 0;
  // The specs the advisor tries for this plug-in (docs/advisor.md, "Candidates"); by default its
  // name alone, every parameter at its default.
  virtual std::vector<Spec> candidates(const CandidateContext& /*context*/) const {
    return {Spec(name())};
  }
};

// The layout plug-ins of a run: the built-in ones, plus those added by external plug-ins
// (`env.extension<LayoutRegistry>().add(...)` from hit_plugin_register).
class LayoutRegistry : public Registry<LayoutPlugin> {
 public:
  explicit LayoutRegistry(Environment& env);
};

// What hit::layout() may be told besides the spec, the topology and the shape (designated
// initialisers: layout("blocks", topo, shape, {.devices = plan})).
struct LayoutOptions {
  // One binding per process of the topology (a plan for another run); empty: the run's own
  // binding (the physical topology's, collective on first use), cut or padded with host bindings
  // to the topology's size.
  std::vector<DeviceBinding> devices{};
};

// Builds a layout by spec with the plug-ins of the run's Environment (Environment::current(),
// whose rank local() then describes). `spec` is the program's text, or a Setting resolved where
// the program starts (layout_setting()): then the layout records what the code asked for and what
// replaced it, and an error in the replacement names what set it.
[[nodiscard]] Layout layout(const Setting& spec, const Topology& topo, const Shape& shape,
                            const LayoutOptions& options = {});
// The same from a spec built as a value (Spec("weighted").with("w", w)): nothing is parsed.
[[nodiscard]] Layout layout(const Spec& spec, const Topology& topo, const Shape& shape,
                            const LayoutOptions& options = {});

// The spec of the layout the program calls `label`, resolved from the run's configuration: the
// command line's value of "layout-<label>" (Config::set: --layout-<label>, or the program's own
// flag), else HIT_LAYOUT_<LABEL>, else `code`. Resolve it where the program starts and pass it to
// layout() or sparse_layout(): nothing replaces a spec the program does not pass this way.
[[nodiscard]] Setting layout_setting(const Environment& env, std::string_view label,
                                     std::string code);

// ---- building blocks for layout plug-ins ------------------------------------------------------

// Part `part` of `n` elements split into `parts` as Hitmap's blocks: the first n mod parts parts
// get one element more (n=10, parts=3 -> 4,3,3). Returns positions [first, last) in 0..n.
[[nodiscard]] std::pair<index_t, index_t> block_range(index_t n, int parts, int part);

// `sig` split into `parts` consecutive pieces with block_range (strides and begins kept).
[[nodiscard]] AxisPieces block_pieces(const Sig& sig, int parts);
// `sig` split into consecutive pieces of the given sizes (summing to sig.size()).
[[nodiscard]] AxisPieces sized_pieces(const Sig& sig, const std::vector<index_t>& sizes);

// The Cartesian-product layout: the process at coordinates (c0, c1, ...) gets one block per
// combination of pieces[0][c0] x pieces[1][c1] x ... (row-major order), with the shape axes past
// the topology's taken whole. `pieces` has one entry per topology axis, each with dims()[k]
// entries. Every built-in layout except work-package ones is of this form.
[[nodiscard]] Layout product_layout(const LayoutRequest& request,
                                    const std::vector<AxisPieces>& pieces,
                                    std::vector<double> predicted_time = {});

// Rounds real `weights` (>= 0, not all zero) to integer parts that sum exactly to `n`, each within
// one element of its exact share n*w/sum(w): the floors, then one more element to the parts with
// the largest remainders (ties to the lower index). Throws Error(invalid_argument) for a negative,
// non-finite or all-zero list.
[[nodiscard]] std::vector<index_t> parts_from_weights(std::span<const double> weights, index_t n);

// The layout whose array axis `axis` is split over topology axis `axis` into consecutive parts of
// the given sizes, one per topology coordinate along that axis (`parts` has dims()[axis] entries,
// each >= 0, summing to the extent of that shape axis; a 0 makes that coordinate inactive). The
// other axes the topology distributes are split as `blocks` does; further shape axes are whole.
// `predicted_time`: empty, one value per process, or one per coordinate along `axis` (each
// process of that slice gets it). Shared by `weighted`, `blocksLB` and `fpm`.
[[nodiscard]] Layout layout_from_parts(const LayoutRequest& request, int axis,
                                       const std::vector<index_t>& parts,
                                       std::vector<double> predicted_time = {});

// layout_from_parts with the parts of parts_from_weights: `weights` (> 0 expected, one per
// coordinate along topology axis `axis`) share out the extent of shape axis `axis`.
[[nodiscard]] Layout layout_from_weights(const LayoutRequest& request, int axis,
                                         std::span<const double> weights);

// Every process keeps the whole layout (every block of every process), so the number of blocks
// bounds what a layout may be: at most max_layout_blocks (and as many processes), about
// 1 GiB of block descriptions. Plug-ins that make many blocks per process call
// require_block_count with their count *before* building them; it throws Error(invalid_argument)
// naming the layout, the count and the memory it would take. hit::layout() checks the process
// count itself, and product_layout the product of its pieces.
inline constexpr std::int64_t max_layout_blocks = std::int64_t{1} << 22;
void require_block_count(const LayoutRequest& request, double blocks);

// Throws Error(shape) unless the shape has at least as many axes as the topology (extra shape axes
// are not distributed; fewer is an error). For plug-ins that split axis k over topology axis k.
void require_layout_axes(const LayoutRequest& request);

namespace detail {
// Defined with the built-in plug-ins (plugins/layouts/builtin.cpp).
void register_builtin_layouts(LayoutRegistry& registry);
}  // namespace detail

}  // namespace hit
