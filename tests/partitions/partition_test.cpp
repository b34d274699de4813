// Partition plug-ins: blocks cover the domain exactly once, CUDA geometry, access-pattern shaping,
// out-of-core chunks, the registry and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/partition.hpp"

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

hit::Environment& env() {
  return hit::Environment::current();
}

hit::PartitionDevice dev(const std::string& kind, int cores = 4) {
  hit::PartitionDevice d;
  d.kind = hit::device_kind(kind);
  d.cores = cores;
  if (d.kind == hit::DeviceKind::cuda) {
    d.capacity = 16ull << 30;
    d.multiprocessors = 132;
  }
  return d;
}

hit::Partition make(const std::string& spec, const hit::PartitionDevice& d,
                    const hit::Shape& domain, const hit::AccessPattern& access = {},
                    const hit::Footprint& f = {}) {
  return hit::partition(spec, domain, {.access = access, .footprint = f, .device = d});
}

// Every index of the domain in exactly one block, every block inside the domain.
void expect_exact_cover(const hit::Partition& p, const std::string& what) {
  std::map<std::vector<hit::index_t>, int> seen;
  std::int64_t covered = 0;
  for (std::int64_t b = 0; b < p.block_count(); ++b) {
    const hit::Shape blk = p.block(b);
    ASSERT_TRUE(p.domain().includes(blk)) << what << ": block " << blk << " outside " << p.domain();
    blk.for_each([&](const hit::Index& i) {
      std::vector<hit::index_t> key;
      for (int k = 0; k < i.rank(); ++k) key.push_back(i[k]);
      ++seen[key];
      ++covered;
    });
  }
  EXPECT_EQ(covered, p.domain().size()) << what;
  p.domain().for_each([&](const hit::Index& i) {
    std::vector<hit::index_t> key;
    for (int k = 0; k < i.rank(); ++k) key.push_back(i[k]);
    EXPECT_EQ(seen[key], 1) << what << ": index " << i;
  });
}

hit::Shape random_shape(std::mt19937& rng) {
  const int rank = 1 + static_cast<int>(rng() % 3);
  hit::Shape s = hit::Shape::of_rank(rank);
  for (int k = 0; k < rank; ++k) {
    const hit::index_t begin = static_cast<hit::index_t>(rng() % 7) - 3;
    const hit::index_t stride = 1 + static_cast<hit::index_t>(rng() % 3);
    const hit::index_t n = static_cast<hit::index_t>(rng() % (rank == 1   ? 700
                                                              : rank == 2 ? 40
                                                                          : 9));
    s = s.with_sig(k, hit::Sig(begin, begin + n * stride, stride));
  }
  return s;
}

}  // namespace

TEST(AccessPattern, ParsePrintMerge) {
  const auto stencil = hit::AccessPattern::parse("-1:1, -1:1");
  EXPECT_EQ(stencil.rank(), 2);
  EXPECT_EQ(stencil.str(), "-1:1,-1:1");
  EXPECT_TRUE(stencil.reaches_across_rows());
  EXPECT_EQ(stencil, hit::AccessPattern::stencil(2, 1));
  const auto rows = hit::AccessPattern::parse("0,all");
  EXPECT_FALSE(rows.reaches_across_rows());
  EXPECT_TRUE(rows.axis(1).whole);
  const auto cols = hit::AccessPattern::parse("all,0");
  EXPECT_FALSE(cols.reaches_across_rows());  // a whole axis is read linearly, not a neighbourhood
  EXPECT_EQ(rows.merge(cols).str(), "all,all");
  EXPECT_EQ(hit::AccessPattern::parse("-2:0,1").str(), "-2:0,-1:1");
  EXPECT_EQ(hit::AccessPattern().merge(rows), rows);
  EXPECT_FALSE(hit::AccessPattern().known());
  EXPECT_EQ(hit::AccessPattern().axis(0).before, 0);
}

TEST(AccessPattern, ErrorsShowTheSyntax) {
  for (const char* bad : {"", "x", "1:-1", "2:3", "-3:-1", "-1", "0,,0", "all,1:2:3"}) {
    try {
      hit::AccessPattern::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const hit::Error& e) {
      EXPECT_EQ(e.kind(), hit::ErrorKind::parse);
      EXPECT_THAT(e.what(), AllOf(HasSubstr("access pattern"), HasSubstr("one item per axis")));
    }
  }
  EXPECT_THROW(hit::AccessPattern::parse("0").merge(hit::AccessPattern::parse("0,0")), hit::Error);
}

TEST(PartitionCover, EveryPluginCoversEveryDomainExactlyOnce) {
  std::mt19937 rng(11);
  const std::vector<std::string> specs = {"single",
                                          "threads",
                                          "threads:threads=3",
                                          "blocks",
                                          "blocks:extra=1",
                                          "blocks:rows=2",
                                          "blocks:threads=64",
                                          "blocks:block=2x3",
                                          "outOfCore:rows=5",
                                          "outOfCore:rows=1,inner=single"};
  int checked = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const hit::Shape domain = random_shape(rng);
    for (const std::string kind : {"cpu", "emu", "cuda"}) {
      const auto d = dev(kind, 1 + static_cast<int>(rng() % 8));
      for (const std::string& spec : specs) {
        if (spec.find("block=2x3") != std::string::npos && domain.rank() != 2) continue;
        const auto p = make(spec, d, domain);
        const std::string what = spec + " on " + kind + " of " + domain.str();
        if (p.out_of_core()) {
          ASSERT_FALSE(p.chunks().empty()) << what;
          // The chunks cover the domain once, and each chunk's blocks cover the chunk once.
          hit::index_t rows = 0;
          for (std::size_t c = 0; c < p.chunks().size(); ++c) {
            rows += p.chunks()[c].extent(0);
            expect_exact_cover(p.chunk(c), what + " chunk " + std::to_string(c));
          }
          EXPECT_EQ(rows, domain.extent(0)) << what;
        } else {
          expect_exact_cover(p, what);
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 3000);
}

TEST(PartitionCover, ExtraBlocksAreIdle) {
  const auto p = make("blocks:extra=1", dev("cuda"), hit::Shape::parse("[0:4][0:1024]"));
  EXPECT_EQ(p.grid_extent(1), 3);  // two blocks of 512 cover a row, plus one
  EXPECT_EQ(p.block_count(), 12);
  EXPECT_TRUE(p.block(2).empty());
  EXPECT_FALSE(p.block(1).empty());
  EXPECT_THAT(p.str(), HasSubstr("1 extra per row"));
}

TEST(BlocksPartition, DefaultIsOneBy512ThreadsOnCuda) {
  const auto p = make("blocks", dev("cuda"), hit::Shape::parse("[0:100][0:4096]"));
  EXPECT_EQ(p.cuda_block(), (std::array<std::int64_t, 3>{512, 1, 1}));
  EXPECT_EQ(p.cuda_grid(), (std::array<std::int64_t, 3>{8, 100, 1}));
  EXPECT_EQ(p.row_alignment(), 128u);
  EXPECT_EQ(p.block(9), hit::Shape::parse("[1:2][512:1024]"));
  // The other names give the same geometry on a GPU.
  for (const char* other : {"single", "threads"}) {
    const auto q = make(other, dev("cuda"), hit::Shape::parse("[0:100][0:4096]"));
    EXPECT_EQ(q.cuda_block(), p.cuda_block()) << other;
    EXPECT_EQ(q.cuda_grid(), p.cuda_grid()) << other;
  }
}

TEST(BlocksPartition, ShapedByTheAccessPattern) {
  const hit::Shape grid = hit::Shape::parse("[0:1000][0:1000]");
  // Cannon's rows and columns: read linearly, the paper's 1x512.
  const auto cannon = make("blocks", dev("cuda"), grid, hit::AccessPattern::parse("all,all"));
  EXPECT_EQ(cannon.cuda_block(), (std::array<std::int64_t, 3>{512, 1, 1}));
  // A stencil reaches across rows: a 32-wide tile of rows reuses neighbours.
  const auto stencil = make("blocks", dev("cuda"), grid, hit::AccessPattern::stencil(2, 1));
  EXPECT_EQ(stencil.cuda_block(), (std::array<std::int64_t, 3>{32, 16, 1}));
  EXPECT_EQ(stencil.cuda_grid(), (std::array<std::int64_t, 3>{32, 63, 1}));
  // Narrow rows are stacked: 100 columns take 128 threads across, 4 rows down.
  const auto narrow = make("blocks", dev("cuda"), hit::Shape::parse("[0:50][0:100]"));
  EXPECT_EQ(narrow.cuda_block(), (std::array<std::int64_t, 3>{128, 4, 1}));
  const auto small = make("blocks:threads=256", dev("cuda"), grid);
  EXPECT_EQ(small.cuda_block(), (std::array<std::int64_t, 3>{256, 1, 1}));
  const auto explicit_block = make("blocks:block=16x16,pad=1", dev("cuda"), grid);
  EXPECT_EQ(explicit_block.cuda_block(), (std::array<std::int64_t, 3>{16, 16, 1}));
  EXPECT_TRUE(explicit_block.pad_to_blocks());
  // 3-D: z gathers the outer axes.
  const auto cube = make("blocks", dev("cuda"), hit::Shape::parse("[0:3][0:5][0:600]"));
  EXPECT_EQ(cube.cuda_block(), (std::array<std::int64_t, 3>{512, 1, 1}));
  EXPECT_EQ(cube.cuda_grid(), (std::array<std::int64_t, 3>{2, 5, 3}));
}

TEST(BlocksPartition, HostThreadsTakeBlocksOfRows) {
  const auto p = make("blocks", dev("cpu", 4), hit::Shape::parse("[0:100][0:30]"));
  EXPECT_EQ(p.block_extent(0), 7);  // 100 rows / (4 threads x 4)
  EXPECT_EQ(p.block_extent(1), 30);
  EXPECT_EQ(p.threads(), 4);
  const auto t = make("threads", dev("cpu", 4), hit::Shape::parse("[0:10][0:30]"));
  EXPECT_EQ(t.block_count(), 4);
  EXPECT_EQ(t.block(0), hit::Shape::parse("[0:3][0:30]"));
  EXPECT_EQ(t.block(3), hit::Shape::parse("[9:10][0:30]"));
  EXPECT_EQ(t.threads(), 4);
  const auto few = make("threads:threads=8", dev("cpu", 2), hit::Shape::parse("[0:3][0:5]"));
  EXPECT_EQ(few.threads(), 3);  // no more threads than rows
  const auto s = make("single", dev("emu", 4), hit::Shape::parse("[0:10][0:30]"));
  EXPECT_EQ(s.block_count(), 1);
  EXPECT_EQ(s.threads(), 1);
  EXPECT_EQ(s.row_alignment(), 64u);
}

TEST(BlocksPartition, BadParameters) {
  const hit::Shape grid = hit::Shape::parse("[0:10][0:10]");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"blocks:block=0x4", "block=0x4"},
      {"blocks:block=4", "has 1 extents"},
      {"blocks:block=64x64", "exceeds"},
      {"blocks:threads=2000", "threads=2000"},
      {"blocks:extra=-1", "extra=-1"},
      {"blocks:align=3", "power of two"},
      {"blocks:speed=2", "no parameter 'speed'"},
      {"threads:threads=0", "threads=0"},
      {"outOfCore:buffers=3", "buffers=3"},
      {"outOfCore:inner=magic", "inner=magic"},
      {"outOfCore:fill=2", "fill=2"},
      {"outOfCore:mem=lots", "mem=lots"},
      {"nosuch", "unknown partition plug-in 'nosuch'"}};
  for (const auto& [spec, what] : cases) {
    try {
      make(spec, dev("cuda"), grid);
      ADD_FAILURE() << "accepted " << spec;
    } catch (const hit::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what)) << spec;
    }
  }
  try {
    make("nosuch", dev("cpu"), grid);
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("blocks"), HasSubstr("outOfCore"), HasSubstr("single"),
                                HasSubstr("threads")));
  }
  EXPECT_THROW(make("blocks", dev("cpu"), grid, hit::AccessPattern::parse("0,0,0")), hit::Error);
  // A null or empty domain (an inactive process's) is the empty partition, which a launch runs
  // as nothing; its spec is still checked, so a bad one fails on every process.
  EXPECT_TRUE(make("blocks", dev("cpu"), hit::Shape()).domain().is_null());
  EXPECT_TRUE(make("blocks", dev("cpu"), hit::Shape::extents({0, 4})).domain().is_null());
  EXPECT_THROW(make("nosuch", dev("cpu"), hit::Shape()), hit::Error);
  EXPECT_THROW(make("blocks:bogus=1", dev("cpu"), hit::Shape()), hit::Error);
}

TEST(OutOfCorePartition, ChunksFitTheBudget) {
  auto d = dev("emu", 2);
  d.capacity = 1 << 20;  // 1 MiB
  const hit::Shape domain = hit::Shape::parse("[0:2000][0:128]");
  // A row of the domain costs 1 KiB over the arrays cut with it, 100 KiB are staged whole.
  const hit::Footprint f{1024, 100 * 1024};
  const auto p = make("outOfCore:fill=1", d, domain, {}, f);
  ASSERT_FALSE(p.chunks().empty());
  const hit::index_t rows = (1 << 20) - 100 * 1024;
  const hit::index_t per_chunk = rows / (2 * 1024);  // two buffers
  EXPECT_EQ(p.chunks().front().extent(0), per_chunk);
  EXPECT_EQ(static_cast<hit::index_t>(p.chunks().size()), (2000 + per_chunk - 1) / per_chunk);
  EXPECT_EQ(p.buffers(), 2);
  for (const auto& c : p.chunks()) {
    EXPECT_LE(static_cast<std::uint64_t>(c.extent(0)) * 1024 * 2 + 100 * 1024, 1u << 20);
  }
  // One buffer: twice the rows.
  const auto one = make("outOfCore:fill=1,buffers=1", d, domain, {}, f);
  EXPECT_EQ(one.chunks().front().extent(0), rows / 1024);
  // Without a footprint the launch decides, within the budget.
  const auto later = make("outOfCore", d, domain);
  EXPECT_TRUE(later.out_of_core());
  EXPECT_TRUE(later.chunks().empty());
  EXPECT_EQ(later.chunk_budget(), static_cast<std::uint64_t>((1 << 20) * 0.9));
  EXPECT_EQ(later.with_footprint(f).chunks().size(),
            make("outOfCore", d, domain, {}, f).chunks().size());
  // mem= plans for another size.
  const auto bigger = make("outOfCore:mem=4MiB,fill=1", d, domain, {}, f);
  EXPECT_GT(bigger.chunks().front().extent(0), p.chunks().front().extent(0));
}

TEST(OutOfCorePartition, NothingFitsIsAnOutOfMemoryError) {
  auto d = dev("emu", 2);
  d.capacity = 1 << 20;
  try {
    make("outOfCore", d, hit::Shape::parse("[0:10][0:10]"), {}, hit::Footprint{1024, 2u << 20});
    ADD_FAILURE() << "a chunk plan was made";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("not even one row fits"), HasSubstr("more processes")));
  }
}

TEST(OutOfCorePartition, ChunkKeepsTheBlockGeometry) {
  const auto p = make("outOfCore:rows=30,inner=blocks,buffers=1", dev("cuda"),
                      hit::Shape::parse("[0:100][0:2048]"));
  ASSERT_EQ(p.chunks().size(), 4u);
  EXPECT_EQ(p.buffers(), 1);
  EXPECT_EQ(p.chunks().back(), hit::Shape::parse("[90:100][0:2048]"));
  const auto c = p.chunk(3);
  EXPECT_EQ(c.domain(), hit::Shape::parse("[90:100][0:2048]"));
  EXPECT_EQ(c.cuda_block(), p.cuda_block());
  EXPECT_EQ(c.cuda_grid(), (std::array<std::int64_t, 3>{4, 10, 1}));
  EXPECT_FALSE(c.out_of_core());
}

TEST(PartitionEntry, OverrideByLabelAndThisRanksDevice) {
  auto& e = env();
  const hit::Shape domain = hit::Shape::parse("[0:64][0:64]");
  const auto mine = hit::PartitionDevice::of(e);
  EXPECT_GE(mine.cores, 1);
  const auto p = hit::partition("single", domain);
  EXPECT_EQ(p.device_kind(), mine.kind);
  e.config().set("partition-grid", "threads:threads=2");
  const auto q = hit::partition(hit::partition_setting(e, "grid", "single"), domain);
  EXPECT_EQ(q.spec(), "threads:threads=2");
  EXPECT_EQ(hit::partition("single", domain).spec(), "single");  // text is not replaced
  e.config().set("partition-grid", "bogus");
  try {
    (void)hit::partition(hit::partition_setting(e, "grid", "single"), domain);
    ADD_FAILURE() << "bogus accepted";
  } catch (const hit::Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("partition of 'grid' set to 'bogus' by --partition-grid: "));
  }
  e.config().set("partition-grid", "single");
}
