// `blocks`: the CUDA grid of thread blocks of the Hitmap paper — 1x512 threads by default (rows
// read linearly), shaped by the access pattern, optionally with one extra (idle) block at the end
// of each row of the grid against memory contention. On cpu and emu: blocks of rows run by the
// device's cores.
#include <fmt/format.h>

#include <cstdio>

#include "builtin.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {
namespace {

index_t round_up(index_t a, index_t m) {
  return (a + m - 1) / m * m;
}

std::vector<index_t> parse_block(const Spec& spec, int rank) {
  const std::string text = spec.get_string("block", "");
  std::vector<index_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto x = text.find('x', start);
    const std::string item = text.substr(start, x == std::string::npos ? x : x - start);
    index_t v = 0;
    std::size_t used = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 1) {
      throw Error(ErrorKind::plugin,
                  fmt::format("partition '{}': block={} is not a list of positive extents such as "
                              "16x32",
                              spec.str(), text));
    }
    out.push_back(v);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (static_cast<int>(out.size()) != rank) {
    throw Error(ErrorKind::plugin,
                fmt::format("partition '{}': block={} has {} extents, the domain "
                            "has {} axes",
                            spec.str(), text, out.size(), rank));
  }
  return out;
}

}  // namespace

std::vector<index_t> cuda_block_shape(const Shape& domain, const AccessPattern& access, int threads,
                                      int warp) {
  const int r = domain.rank();
  std::vector<index_t> block(static_cast<std::size_t>(r), 1);
  const index_t w = std::max(1, warp);
  const index_t cols = std::max<index_t>(1, domain.extent(r - 1));
  if (r == 1) {
    block[0] = std::min<index_t>(threads, round_up(cols, w));
    return block;
  }
  const index_t rows = std::max<index_t>(1, domain.extent(r - 2));
  index_t bx = std::min<index_t>(threads, round_up(cols, w));
  if (access.reaches_across_rows()) bx = std::min<index_t>(bx, w);
  const index_t by = std::max<index_t>(1, std::min<index_t>(threads / bx, rows));
  block[static_cast<std::size_t>(r - 1)] = bx;
  block[static_cast<std::size_t>(r - 2)] = by;
  return block;
}

Partition default_cuda_partition(const PartitionRequest& r, const std::string& spec) {
  Partition p(spec, r.device.kind, r.domain,
              cuda_block_shape(r.domain, r.access, 512, r.device.warp));
  p.set_padding(default_row_alignment(r.device.kind), false);
  return p;
}

Partition blocks_partition(const PartitionRequest& r, const std::string& spec_text) {
  const Spec& spec = r.spec;
  const int rank = r.domain.rank();
  const auto extra = spec.get_int("extra", 0);  // 0..64
  const auto align =
      spec.get_int("align", static_cast<std::int64_t>(default_row_alignment(r.device.kind)));
  const bool pad = spec.get_int("pad", 0) != 0;
  std::vector<index_t> block;
  int threads = 1;
  if (spec.has("block")) {
    block = parse_block(spec, rank);
  } else if (r.device.kind == DeviceKind::cuda) {
    const auto t = spec.get_int("threads", 512);  // >= 1; the device's limit is checked here
    if (t > r.device.max_threads_per_block) {
      throw Error(ErrorKind::plugin,
                  fmt::format("partition '{}': threads={} is outside 1..{} (threads "
                              "per CUDA block)",
                              spec.str(), t, r.device.max_threads_per_block));
    }
    block = cuda_block_shape(r.domain, r.access, static_cast<int>(t), r.device.warp);
  } else {
    // Host threads take blocks of rows; four per thread even out uneven rows.
    const index_t rows = std::max<index_t>(1, r.domain.extent(0));
    const auto per = spec.get_int(
        "rows", std::max<index_t>(1, (rows + 4 * r.device.cores - 1) / (4 * r.device.cores)));
    block.push_back(per);
    for (int k = 1; k < rank; ++k) block.push_back(std::max<index_t>(1, r.domain.extent(k)));
  }
  if (r.device.kind == DeviceKind::cuda) {
    index_t total = 1;
    for (index_t b : block) total *= b;
    if (total > r.device.max_threads_per_block) {
      throw Error(ErrorKind::plugin,
                  fmt::format("partition '{}': a block of {} threads exceeds the "
                              "{} a CUDA block may have",
                              spec.str(), total, r.device.max_threads_per_block));
    }
  } else {
    threads = r.device.cores;
  }
  std::vector<index_t> grid;
  for (int k = 0; k < rank; ++k) {
    grid.push_back((r.domain.extent(k) + block[static_cast<std::size_t>(k)] - 1) /
                   block[static_cast<std::size_t>(k)]);
  }
  grid.back() += extra;
  Partition p(spec_text, r.device.kind, r.domain, block, grid);
  if (r.device.kind != DeviceKind::cuda) {
    p.set_threads(static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(threads, p.block_count()))));
  }
  try {
    p.set_padding(static_cast<std::size_t>(align), pad);
  } catch (const Error& e) {
    throw Error(ErrorKind::plugin, fmt::format("partition '{}': {}", spec.str(), e.what()));
  }
  return p;
}

namespace {

class BlocksPartition final : public PartitionPlugin {
 public:
  std::string name() const override { return "blocks"; }
  std::string description() const override {
    return "CUDA grid of thread blocks (1x512 threads by default, shaped by the access pattern); "
           "blocks of rows over the cores on cpu and emu";
  }
  std::vector<ParamInfo> params() const override {
    return {
        ParamInfo::integer("threads", "threads per CUDA block (at most the device's limit)", "512")
            .at_least(1),
        ParamInfo::text("block", "explicit block extents, e.g. 16x32"),
        ParamInfo::integer("extra", "idle blocks added at the end of each grid row", "0")
            .between(0, 64),
        ParamInfo::integer("pad", "1: pad staged tiles to whole blocks (zero-filled)", "0"),
        ParamInfo::integer("align", "byte alignment of staged rows (power of two)",
                           "128 on cuda, 64 on emu, 0 on cpu")
            .at_least(0),
        ParamInfo::integer("rows", "rows per block on cpu and emu", "rows / (4 x cores)")
            .at_least(1)};
  }
  Partition make(const PartitionRequest& r) const override {
    return blocks_partition(r, r.spec.str());
  }
};

}  // namespace

void register_blocks_partition(PartitionRegistry& registry) {
  registry.add(std::make_shared<BlocksPartition>());
}

}  // namespace hit::detail
