// Partition values, access patterns, the registry and the by-name entry points.

#include "hit/partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit {

// ---- access patterns ---------------------------------------------------------------------------

namespace {

constexpr std::string_view access_syntax =
    "one item per axis, comma separated: 0 (its own element), -b:a (b before, a after), "
    "all (the whole axis); e.g. -1:1,-1:1 or all,0";

bool parse_index(std::string_view s, index_t& out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string trim(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ' && c != '\t') out += c;
  }
  return out;
}

}  // namespace

AccessPattern::AccessPattern(std::vector<Axis> axes) : axes_(std::move(axes)) {
  for (const Axis& a : axes_) {
    if (!a.whole && (a.before < 0 || a.after < 0)) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("access reach must be >= 0 before and after, got {} and {}", a.before,
                              a.after));
    }
  }
}

AccessPattern AccessPattern::stencil(int rank, index_t radius) {
  return AccessPattern(
      std::vector<Axis>(static_cast<std::size_t>(rank), Axis{false, radius, radius}));
}

AccessPattern AccessPattern::parse(std::string_view text) {
  const std::string t = trim(text);
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::parse,
                 fmt::format("access pattern '{}': {} ({})", text, why, access_syntax));
  };
  if (t.empty()) throw fail("it is empty");
  std::vector<Axis> axes;
  std::size_t start = 0;
  while (start <= t.size()) {
    const auto comma = t.find(',', start);
    const std::string item = t.substr(start, comma == std::string::npos ? comma : comma - start);
    Axis a;
    if (item == "all" || item == "ALL") {
      a.whole = true;
    } else if (const auto colon = item.find(':'); colon != std::string::npos) {
      index_t lo = 0, hi = 0;
      if (!parse_index(item.substr(0, colon), lo) || !parse_index(item.substr(colon + 1), hi)) {
        throw fail("'" + item + "' is not -b:a");
      }
      if (lo > 0 || hi < 0) throw fail("'" + item + "' must include 0 (-b <= 0 <= a)");
      a.before = -lo;
      a.after = hi;
    } else {
      index_t r = 0;
      if (!parse_index(item, r)) throw fail("'" + item + "' is not 0, r, -b:a or all");
      if (r < 0) throw fail("'" + item + "' is negative (write -b:0)");
      a.before = r;
      a.after = r;
    }
    axes.push_back(a);
    if (axes.size() > static_cast<std::size_t>(max_rank)) throw fail("more than 8 axes");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return AccessPattern(std::move(axes));
}

AccessPattern::Axis AccessPattern::axis(int k) const {
  if (k < 0 || k >= rank()) return Axis{};
  return axes_[static_cast<std::size_t>(k)];
}

bool AccessPattern::reaches_across_rows() const noexcept {
  for (int k = 0; k + 1 < rank(); ++k) {
    const Axis& a = axes_[static_cast<std::size_t>(k)];
    if (!a.whole && (a.before > 0 || a.after > 0)) return true;
  }
  return false;
}

AccessPattern AccessPattern::merge(const AccessPattern& o) const {
  if (!known()) return o;
  if (!o.known()) return *this;
  if (rank() != o.rank()) {
    throw Error(ErrorKind::shape, fmt::format("cannot merge access patterns of {} and {} axes ({} "
                                              "and {})",
                                              rank(), o.rank(), str(), o.str()));
  }
  std::vector<Axis> out;
  for (int k = 0; k < rank(); ++k) {
    const Axis a = axis(k), b = o.axis(k);
    out.push_back(
        Axis{a.whole || b.whole, std::max(a.before, b.before), std::max(a.after, b.after)});
  }
  return AccessPattern(std::move(out));
}

std::string AccessPattern::str() const {
  if (!known()) return "unknown";
  std::string out;
  for (const Axis& a : axes_) {
    if (!out.empty()) out += ',';
    if (a.whole) {
      out += "all";
    } else if (a.before == 0 && a.after == 0) {
      out += "0";
    } else {
      out += fmt::format("-{}:{}", a.before, a.after);
    }
  }
  return out;
}

// ---- the device as partitions see it -----------------------------------------------------------

PartitionDevice PartitionDevice::of(Environment& env) {
  const auto& topo = PhysicalTopology::of(env);
  const RankPlacement& me = topo.mine();
  PartitionDevice d;
  d.kind = me.device.kind;
  d.index = me.device.index;
  d.cores = std::max<int>(1, static_cast<int>(me.cores.size()));
  if (auto it = me.device.params.find("cores"); it != me.device.params.end()) {
    d.cores = std::max(1, std::stoi(it->second));
  }
  const NodeDescription& node = topo.my_node();
  switch (d.kind) {
    case DeviceKind::cuda:
      for (const auto& g : node.gpus) {
        if (g.index == d.index) {
          d.capacity = g.memory_bytes;
          d.multiprocessors = g.multiprocessors;
        }
      }
      break;
    case DeviceKind::emu:
      if (auto mem = DeviceParams::of(me.device).mem) d.capacity = *mem;
      break;
    case DeviceKind::cpu:
      d.capacity = node.host.memory_bytes / static_cast<std::uint64_t>(std::max(1, me.node_size));
      break;
  }
  return d;
}

// ---- Partition ---------------------------------------------------------------------------------

namespace {

index_t ceil_div(index_t a, index_t b) {
  return b <= 0 ? 0 : (a + b - 1) / b;
}

std::string dims_text(const std::vector<index_t>& v) {
  std::string out;
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? "x" : "") + std::to_string(v[k]);
  return out;
}

}  // namespace

Partition::Partition(std::string spec, DeviceKind device_kind, Shape domain,
                     std::vector<index_t> block, std::vector<index_t> grid)
    : spec_(std::move(spec)), kind_(device_kind), domain_(domain), block_(std::move(block)) {
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::plugin,
                 fmt::format("partition '{}' of {}: {}", spec_, domain_.str(), why));
  };
  if (domain_.is_null()) throw fail("the domain is the null shape");
  if (static_cast<int>(block_.size()) != domain_.rank()) {
    throw fail(fmt::format("blocks of {} axes for a domain of {}", block_.size(), domain_.rank()));
  }
  for (index_t b : block_) {
    if (b < 1) throw fail("block extents must be at least 1, got " + dims_text(block_));
  }
  std::vector<index_t> needed;
  for (int k = 0; k < domain_.rank(); ++k) {
    needed.push_back(ceil_div(domain_.extent(k), block_[static_cast<std::size_t>(k)]));
  }
  if (grid.empty()) grid = needed;
  if (grid.size() != needed.size()) {
    throw fail(fmt::format("a grid of {} axes for a domain of {}", grid.size(), needed.size()));
  }
  for (std::size_t k = 0; k < needed.size(); ++k) {
    if (grid[k] < needed[k]) {
      throw fail(fmt::format("a grid of {} blocks of {} does not cover the domain (needs {})",
                             dims_text(grid), dims_text(block_), dims_text(needed)));
    }
    extra_.push_back(grid[k] - needed[k]);
  }
  grid_ = std::move(grid);
}

index_t Partition::block_extent(int axis) const {
  if (axis < 0 || axis >= rank()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("partition axis {} is outside 0..{}", axis, rank() - 1));
  }
  return block_[static_cast<std::size_t>(axis)];
}

index_t Partition::grid_extent(int axis) const {
  if (axis < 0 || axis >= rank()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("partition axis {} is outside 0..{}", axis, rank() - 1));
  }
  return grid_[static_cast<std::size_t>(axis)];
}

std::int64_t Partition::block_count() const noexcept {
  if (grid_.empty()) return 0;
  std::int64_t n = 1;
  for (index_t g : grid_) n *= g;
  return n;
}

Shape Partition::block(std::int64_t i) const {
  if (i < 0 || i >= block_count()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("block {} is outside the {} blocks of partition '{}'", i, block_count(),
                            spec_));
  }
  Shape out = domain_;
  for (int k = rank() - 1; k >= 0; --k) {
    const auto g = grid_[static_cast<std::size_t>(k)];
    const index_t pos = i % g;
    i /= g;
    const index_t b = block_[static_cast<std::size_t>(k)];
    const index_t n = domain_.extent(k);
    const index_t first = std::min(pos * b, n);
    const index_t last = std::min(first + b, n);
    out = out.with_sig(k, domain_[k].select_tile(first, last));
  }
  return out;
}

std::vector<Shape> Partition::blocks() const {
  std::vector<Shape> out;
  const std::int64_t n = block_count();
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.push_back(block(i));
  return out;
}

namespace {
std::array<std::int64_t, 3> xyz(const std::vector<index_t>& v) {
  std::array<std::int64_t, 3> out{1, 1, 1};
  const int r = static_cast<int>(v.size());
  if (r >= 1) out[0] = v[static_cast<std::size_t>(r - 1)];
  if (r >= 2) out[1] = v[static_cast<std::size_t>(r - 2)];
  for (int k = 0; k + 2 < r; ++k) out[2] *= v[static_cast<std::size_t>(k)];
  return out;
}
}  // namespace

std::array<std::int64_t, 3> Partition::cuda_block() const {
  return xyz(block_);
}
std::array<std::int64_t, 3> Partition::cuda_grid() const {
  return xyz(grid_);
}

void Partition::set_threads(int threads) {
  if (threads < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("a partition runs on at least 1 thread, got {}", threads));
  }
  threads_ = threads;
}

void Partition::set_padding(std::size_t row_alignment, bool pad_to_blocks) {
  if (row_alignment != 0 && (row_alignment & (row_alignment - 1)) != 0) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("row alignment must be 0 or a power of two bytes, got {}", row_alignment));
  }
  row_alignment_ = row_alignment;
  pad_to_blocks_ = pad_to_blocks;
}

void Partition::set_chunks(std::vector<Shape> chunks, int buffers) {
  if (buffers < 1 || buffers > 2) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("buffers must be 1 or 2, got {}", buffers));
  }
  index_t rows = 0;
  for (const Shape& c : chunks) {
    if (!domain_.includes(c)) {
      throw Error(ErrorKind::plugin,
                  fmt::format("partition '{}': chunk {} is outside the domain {}", spec_, c.str(),
                              domain_.str()));
    }
    rows += c.extent(0);
  }
  if (!chunks.empty() && rows != domain_.extent(0)) {
    throw Error(ErrorKind::plugin,
                fmt::format("partition '{}': the chunks hold {} rows of the {} of "
                            "the domain",
                            spec_, rows, domain_.extent(0)));
  }
  chunks_ = std::move(chunks);
  buffers_ = buffers;
}

void Partition::set_chunk_budget(std::uint64_t bytes, int buffers) {
  set_chunks({}, buffers);
  chunk_budget_ = bytes;
}

Partition Partition::with_footprint(const Footprint& f) const {
  if (!chunks_.empty() || chunk_budget_ == 0) return *this;
  const auto rows_total = domain_.extent(0);
  std::uint64_t rows = static_cast<std::uint64_t>(std::max<index_t>(rows_total, 1));
  if (f.bytes_per_row > 0) {
    if (f.fixed_bytes >= chunk_budget_) {
      rows = 0;
    } else {
      rows = (chunk_budget_ - f.fixed_bytes) /
             (f.bytes_per_row * static_cast<std::uint64_t>(buffers_));
    }
  }
  if (rows == 0) {
    throw Error(ErrorKind::out_of_memory,
                fmt::format("partition '{}' of {}: not even one row fits the device budget of {} "
                            "(one row needs {} per buffer, {} buffer(s), {} staged whole); use "
                            "more processes or a device with more memory",
                            spec_, domain_.str(), human_bytes(static_cast<double>(chunk_budget_)),
                            human_bytes(static_cast<double>(f.bytes_per_row)), buffers_,
                            human_bytes(static_cast<double>(f.fixed_bytes))));
  }
  Partition out = *this;
  std::vector<Shape> chunks;
  for (index_t first = 0; first < rows_total; first += static_cast<index_t>(rows)) {
    const index_t last = std::min<index_t>(rows_total, first + static_cast<index_t>(rows));
    chunks.push_back(domain_.with_sig(0, domain_[0].select_tile(first, last)));
  }
  if (chunks.empty()) chunks.push_back(domain_);
  out.chunks_ = std::move(chunks);
  return out;
}

Partition Partition::chunk(std::size_t i) const {
  if (i >= chunks_.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("chunk {} is outside the {} chunks of partition '{}'", i,
                            chunks_.size(), spec_));
  }
  std::vector<index_t> grid;
  for (int k = 0; k < rank(); ++k) {
    grid.push_back(ceil_div(chunks_[i].extent(k), block_[static_cast<std::size_t>(k)]) +
                   extra_[static_cast<std::size_t>(k)]);
  }
  Partition out(spec_, kind_, chunks_[i], block_, grid);
  out.threads_ = threads_;
  out.row_alignment_ = row_alignment_;
  out.pad_to_blocks_ = pad_to_blocks_;
  return out;
}

std::string Partition::str() const {
  index_t extras = 0;
  for (index_t e : extra_) extras += e;
  std::string out = fmt::format("{} on {}: {} in {} blocks, grid {}", spec_, to_string(kind_),
                                domain_.str(), dims_text(block_), dims_text(grid_));
  if (extras > 0 && !extra_.empty()) {
    out += fmt::format(" ({} extra per row)", extra_.back());
  }
  if (kind_ != DeviceKind::cuda)
    out += fmt::format(", {} thread{}", threads_, threads_ == 1 ? "" : "s");
  if (row_alignment_ > 0) out += fmt::format(", rows aligned to {} B", row_alignment_);
  if (pad_to_blocks_) out += ", padded to whole blocks";
  if (!chunks_.empty()) {
    out += fmt::format(", {} chunk{} of up to {} rows, {} buffer{}", chunks_.size(),
                       chunks_.size() == 1 ? "" : "s", chunks_.front().extent(0), buffers_,
                       buffers_ == 1 ? "" : "s");
  } else if (chunk_budget_ > 0) {
    out += fmt::format(", chunks within {} ({} buffer{})", format_bytes(chunk_budget_), buffers_,
                       buffers_ == 1 ? "" : "s");
  }
  return out;
}

// ---- registry and entry points -----------------------------------------------------------------

PartitionRegistry::PartitionRegistry(Environment& /*env*/)
    : Registry<PartitionPlugin>("partition") {
  detail::register_builtin_partitions(*this);
}

namespace {

Partition make_partition(Environment& env, std::string_view spec_text,
                         const PartitionDevice& device, const Shape& domain,
                         const AccessPattern& access, const Footprint& footprint) {
  const Spec spec = Spec::parse(spec_text);
  const PartitionPlugin& plugin = env.extension<PartitionRegistry>().get(spec);
  if (domain.is_null() || domain.empty()) {
    // An inactive process's domain: the empty partition, which hit::launch runs as nothing.
    return Partition();
  }
  if (access.known() && access.rank() != domain.rank()) {
    throw Error(ErrorKind::shape,
                fmt::format("partition '{}': the access pattern {} has {} axes, the "
                            "domain {} has {}",
                            spec.str(), access.str(), access.rank(), domain.str(), domain.rank()));
  }
  Partition result = plugin.make(PartitionRequest{device, domain, access, spec, footprint});
  if (!(result.domain() == domain)) {
    throw Error(ErrorKind::plugin,
                fmt::format("partition plug-in '{}' returned a partition of {} for {}", spec.name(),
                            result.domain().str(), domain.str()));
  }
  return result;
}

}  // namespace

Setting partition_setting(const Environment& env, std::string_view label, std::string code) {
  return env.config().resolve("partition-" + std::string(label), std::move(code),
                              "partition of '" + std::string(label) + "'");
}

Partition partition(const Setting& spec, const Shape& domain, const PartitionOptions& options) {
  Environment& env = Environment::current();
  try {
    const PartitionDevice device = options.device ? *options.device : PartitionDevice::of(env);
    Partition made =
        make_partition(env, spec.value, device, domain, options.access, options.footprint);
    if (made.out_of_core()) env.note_out_of_core_partition();
    return made;
  } catch (const Error& e) {
    if (!spec.overridden()) throw;
    throw spec.explain(e);
  }
}

}  // namespace hit
