#pragma once
// Partitions (second-level mapping, docs/devices.md §5; Torres et al. §4): how the device a rank is
// bound to runs the rank's local domain — the grid of blocks it executes (CUDA thread blocks, or
// blocks of rows for host threads), the padding staged tiles need, and for `outOfCore` the chunks
// that fit the device. Computed by a partition plug-in chosen by name; the same name works on every
// device kind (the device picks the implementation):
//   single     one block (cpu/emu: one call of the body, which may use all cores, e.g. BLAS)
//   threads    one block of rows per host core (cpu/emu)
//   blocks     CUDA grid of thread blocks, 1x512 threads by default, shaped by the access pattern;
//              on cpu/emu, blocks of rows run by the cores
//   outOfCore  chunks of rows that fit the device, double-buffered so copies overlap compute
// On cuda, `single` and `threads` give the default geometry of `blocks` (a GPU has no single-block
// or per-core notion). A Partition is a value, identical for identical inputs.

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hit/core/registry.hpp"
#include "hit/core/setting.hpp"
#include "hit/core/spec.hpp"
#include "hit/shape.hpp"
#include "hit/topology/device_kind.hpp"

namespace hit {

class Environment;

// Which elements one thread (one index of the domain) reads around its own, per axis: a finite
// reach [-before, +after], or the whole axis (Hitmap's ALL). Text: one item per axis, comma
// separated: `0` (only its own), `-1:1` (one either side), `all`; e.g. Cannon's C += A*B reads a
// row of A and a column of B: "all,all"; a 5-point stencil: "-1:1,-1:1".
class AccessPattern {
 public:
  struct Axis {
    bool whole = false;
    index_t before = 0;
    index_t after = 0;
    friend bool operator==(const Axis&, const Axis&) = default;
  };

  AccessPattern() = default;  // unknown: treated as each thread reading only its own element
  explicit AccessPattern(std::vector<Axis> axes);
  static AccessPattern stencil(int rank, index_t radius);
  static AccessPattern parse(std::string_view text);  // Error(parse) showing the syntax

  bool known() const noexcept { return !axes_.empty(); }
  int rank() const noexcept { return static_cast<int>(axes_.size()); }
  Axis axis(int k) const;  // an unknown pattern reads nothing around on every axis
  // Reads neighbours along an axis other than the last (a 2-D neighbourhood, e.g. a stencil)?
  bool reaches_across_rows() const noexcept;
  // The union of two patterns (e.g. of the arrays of one kernel); an unknown one is neutral.
  AccessPattern merge(const AccessPattern& other) const;
  std::string str() const;
  friend bool operator==(const AccessPattern&, const AccessPattern&) = default;

 private:
  std::vector<Axis> axes_;
};

// What a partition plug-in knows about the device of the rank.
struct PartitionDevice {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  int cores = 1;                                                       // host cores of the rank
  std::uint64_t capacity = std::numeric_limits<std::uint64_t>::max();  // device bytes
  int multiprocessors = 0;                                             // cuda
  int max_threads_per_block = 1024;                                    // cuda
  int warp = 32;                                                       // cuda

  // The device this rank is bound to (PhysicalTopology::of(env) must exist or be made now).
  static PartitionDevice of(Environment& env);
};

// How much device memory a launch over the domain needs (for outOfCore): bytes per index of axis 0
// of the domain over all arrays cut with the domain, and bytes staged whole for every chunk.
struct Footprint {
  std::uint64_t bytes_per_row = 0;
  std::uint64_t fixed_bytes = 0;
};

struct PartitionRequest {
  PartitionDevice device;
  Shape domain;
  AccessPattern access;
  Spec spec;
  Footprint footprint;
};

class Partition {
 public:
  Partition() = default;
  // Blocks of `block` extents (one per axis of `domain`, each >= 1) tiling `domain`; `grid` blocks
  // per axis (empty: just enough to cover it; more: the extra blocks are idle). Error(plugin) when
  // the blocks would not cover the domain.
  Partition(std::string spec, DeviceKind device_kind, Shape domain, std::vector<index_t> block,
            std::vector<index_t> grid = {});

  const std::string& spec() const noexcept { return spec_; }
  DeviceKind device_kind() const noexcept { return kind_; }
  const Shape& domain() const noexcept { return domain_; }
  int rank() const noexcept { return domain_.rank(); }

  // The blocks, row-major over the grid. Together they cover domain() exactly once; idle blocks
  // (past the domain, e.g. the extra block of a row) are empty shapes.
  index_t block_extent(int axis) const;
  index_t grid_extent(int axis) const;
  std::int64_t block_count() const noexcept;
  Shape block(std::int64_t i) const;
  std::vector<Shape> blocks() const;  // all of them, for small grids and tests

  // The CUDA geometry: x along the last axis, y the one before, z the rest together.
  std::array<std::int64_t, 3> cuda_block() const;
  std::array<std::int64_t, 3> cuda_grid() const;

  // Host threads that run the blocks (cpu, emu).
  int threads() const noexcept { return threads_; }
  void set_threads(int threads);

  // Padding of staged tiles: device rows start `row_alignment` bytes apart (a multiple of it), and
  // with pad_to_blocks() every axis is padded up to whole blocks (the padding is zero-filled), so
  // kernels may run whole blocks without bounds checks.
  std::size_t row_alignment() const noexcept { return row_alignment_; }
  bool pad_to_blocks() const noexcept { return pad_to_blocks_; }
  void set_padding(std::size_t row_alignment, bool pad_to_blocks);

  // Out-of-core: chunks of rows of the domain, staged one after the other with `buffers()` device
  // buffers per chunked array (2: copies of the next chunk overlap the compute of this one). The
  // chunks are fixed by the plug-in when it knew the footprint, else launch computes them from the
  // arguments within chunk_budget() bytes (with_footprint()).
  bool out_of_core() const noexcept { return !chunks_.empty() || chunk_budget_ > 0; }
  const std::vector<Shape>& chunks() const noexcept { return chunks_; }
  int buffers() const noexcept { return buffers_; }
  std::uint64_t chunk_budget() const noexcept { return chunk_budget_; }
  void set_chunks(std::vector<Shape> chunks, int buffers);
  void set_chunk_budget(std::uint64_t bytes, int buffers);
  // Chunks of as many rows as fit the budget: rows * bytes_per_row * buffers + fixed_bytes <=
  // chunk_budget(). Error(out_of_memory) when not even one row fits.
  Partition with_footprint(const Footprint& footprint) const;
  // The partition of one chunk: the same blocks over the chunk, no chunks of its own.
  Partition chunk(std::size_t i) const;

  // e.g. "blocks on cuda: [0:100][0:1000] in 1x512 blocks, grid 100x3 (1 extra per row)".
  std::string str() const;

  friend bool operator==(const Partition&, const Partition&) = default;

 private:
  std::string spec_;
  DeviceKind kind_ = DeviceKind::cpu;
  Shape domain_;
  std::vector<index_t> block_;
  std::vector<index_t> grid_;
  int threads_ = 1;
  std::size_t row_alignment_ = 0;
  bool pad_to_blocks_ = false;
  std::vector<index_t> extra_;  // idle blocks per axis beyond those covering the domain
  std::vector<Shape> chunks_;
  int buffers_ = 1;
  std::uint64_t chunk_budget_ = 0;
};

// A partition plug-in: maps a request to a Partition. Deterministic.
class PartitionPlugin {
 public:
  virtual ~PartitionPlugin() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<ParamInfo> params() const = 0;
  // `request.spec` has been checked against params().
  virtual Partition make(const PartitionRequest& request) const = 0;
};

// The partition plug-ins of a run: the built-in ones, plus those added by external plug-ins
// (`env.extension<PartitionRegistry>().add(...)` from hit_plugin_register).
class PartitionRegistry : public Registry<PartitionPlugin> {
 public:
  explicit PartitionRegistry(Environment& env);
};

// What hit::partition() may be told besides the spec and the domain (designated initialisers:
// partition("blocks", domain, {.access = k.access()})).
struct PartitionOptions {
  // What the kernel reads around each index (shapes CUDA blocks; unknown: only its own).
  AccessPattern access{};
  // The device memory a launch over the domain needs (for outOfCore).
  Footprint footprint{};
  // The device to partition for (tools, tests, planning for another rank); empty: the device this
  // rank is bound to.
  std::optional<PartitionDevice> device{};
};

// Builds the partition named by `spec` of `domain`, with the plug-ins of the run's Environment
// (Environment::current()). A null or empty `domain` (an inactive process's) gives the empty
// Partition(), which hit::launch runs as nothing; the spec is still checked, so a bad one fails
// on every process. `spec` is the program's text, or a Setting resolved where the program starts
// (partition_setting()), whose source an error in a replaced spec names.
[[nodiscard]] Partition partition(const Setting& spec, const Shape& domain,
                                  const PartitionOptions& options = {});

class Environment;
// The spec of the partition the program calls `label`: the command line's value of
// "partition-<label>" (Config::set: --partition-<label>, or the program's own flag), else
// HIT_PARTITION_<LABEL>, else `code`.
[[nodiscard]] Setting partition_setting(const Environment& env, std::string_view label,
                                        std::string code);

namespace detail {
// Defined with the built-in plug-ins (plugins/partitions/builtin.cpp).
void register_builtin_partitions(PartitionRegistry& registry);
}  // namespace detail

}  // namespace hit
