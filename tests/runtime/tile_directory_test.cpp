// The coherence protocol's books: every state transition, copies made once per need, eviction
// least recently used that writes back only dirty tiles (asserted on the byte counters), tiles
// in use never evicted, bad input.
#include <gtest/gtest.h>

#include <vector>

#include "hit/core/error.hpp"
#include "hit/runtime/tile_directory.hpp"

namespace {

using hit::runtime::Access;
using hit::runtime::CopyState;
using hit::runtime::host_memory;
using hit::runtime::TileDirectory;
using hit::runtime::TileId;
using hit::runtime::Transfer;
using hit::runtime::TransferKind;
using Drops = std::vector<std::pair<TileId, int>>;

constexpr std::size_t kb = 1000;

// Copies as (tile, from, to, write-back) for comparison; drops are left out (drops() lists them).
struct Copy {
  TileId tile;
  int from;
  int to;
  bool write_back;
  bool operator==(const Copy&) const = default;
};
std::vector<Copy> copies(const std::vector<Transfer>& xs) {
  std::vector<Copy> out;
  for (const Transfer& x : xs) {
    if (x.kind != TransferKind::drop) {
      out.push_back({x.tile, x.from, x.to, x.kind == TransferKind::write_back});
    }
  }
  return out;
}
// The (tile, device) of each drop.
std::vector<std::pair<TileId, int>> drops(const std::vector<Transfer>& xs) {
  std::vector<std::pair<TileId, int>> out;
  for (const Transfer& x : xs) {
    if (x.kind == TransferKind::drop) {
      EXPECT_EQ(x.from, x.to);
      out.emplace_back(x.tile, x.from);
    }
  }
  return out;
}
void PrintTo(const Copy& c, std::ostream* os) {
  *os << "{tile " << c.tile << ": " << c.from << "->" << c.to << (c.write_back ? " wb" : "") << "}";
}

// An acquire that is released at once (the task ran).
std::vector<Copy> use(TileDirectory& d, TileId t, int where, Access mode) {
  const auto xs = d.acquire(t, where, mode);
  d.release(t, where);
  return copies(xs);
}

TEST(TileDirectory, ATileStartsValidOnTheHostOnly) {
  TileDirectory d({10 * kb, 10 * kb});
  const TileId t = d.add(kb);
  EXPECT_TRUE(d.host_valid(t));
  EXPECT_EQ(d.state(t, 1), CopyState::invalid);
  EXPECT_EQ(d.state(t, 2), CopyState::invalid);
  EXPECT_EQ(d.used_bytes(1), 0U);
}

TEST(TileDirectory, AReadCopiesTheTileInOnceThenShares) {
  TileDirectory d({10 * kb});
  const TileId t = d.add(kb);
  EXPECT_EQ(use(d, t, 1, Access::read), (std::vector<Copy>{{t, 0, 1, false}}));
  EXPECT_EQ(d.state(t, 1), CopyState::shared);
  EXPECT_TRUE(d.host_valid(t));
  EXPECT_TRUE(use(d, t, 1, Access::read).empty());  // once per need, not once per task
  EXPECT_EQ(d.counters().to_device_bytes, kb);
  EXPECT_EQ(d.used_bytes(1), kb);
}

TEST(TileDirectory, AWriteMakesTheOnlyValidCopy) {
  TileDirectory d({10 * kb, 10 * kb});
  const TileId t = d.add(kb);
  use(d, t, 1, Access::read);
  use(d, t, 2, Access::read);
  const auto steps = d.acquire(t, 2, Access::read_write);
  d.release(t, 2);
  EXPECT_TRUE(copies(steps).empty());  // its copy is valid: nothing to copy
  EXPECT_EQ(drops(steps), (Drops{{t, 1}}));  // device 1's copy is stale: its memory may go
  EXPECT_EQ(d.state(t, 2), CopyState::modified);
  EXPECT_EQ(d.state(t, 1), CopyState::invalid);
  EXPECT_FALSE(d.host_valid(t));
  EXPECT_EQ(d.used_bytes(1), 0U);  // a stale copy frees its memory
}

TEST(TileDirectory, AWriteAloneCopiesNothingIn) {
  TileDirectory d({10 * kb});
  const TileId t = d.add(kb);
  EXPECT_TRUE(use(d, t, 1, Access::write).empty());
  EXPECT_EQ(d.state(t, 1), CopyState::modified);
  EXPECT_EQ(d.counters().to_device_bytes, 0U);
}

TEST(TileDirectory, AnotherDeviceReadsFromTheOwner) {
  TileDirectory d({10 * kb, 10 * kb});
  const TileId t = d.add(kb);
  use(d, t, 1, Access::write);
  EXPECT_EQ(use(d, t, 2, Access::read), (std::vector<Copy>{{t, 1, 2, false}}));
  EXPECT_EQ(d.state(t, 1), CopyState::owned);  // still newer than the host's: it writes back
  EXPECT_EQ(d.state(t, 2), CopyState::shared);
  EXPECT_FALSE(d.host_valid(t));
  EXPECT_EQ(d.counters().between_devices_bytes, kb);
}

TEST(TileDirectory, TheHostReadsFromTheOwnerAndEveryCopyIsCleanThen) {
  TileDirectory d({10 * kb, 10 * kb});
  const TileId t = d.add(kb);
  use(d, t, 1, Access::write);
  use(d, t, 2, Access::read);
  EXPECT_EQ(use(d, t, host_memory, Access::read), (std::vector<Copy>{{t, 1, 0, false}}));
  EXPECT_TRUE(d.host_valid(t));
  EXPECT_EQ(d.state(t, 1), CopyState::shared);
  EXPECT_EQ(d.state(t, 2), CopyState::shared);
  EXPECT_EQ(d.counters().to_host_bytes, kb);
}

TEST(TileDirectory, AHostWriteInvalidatesEveryDeviceCopy) {
  TileDirectory d({10 * kb, 10 * kb});
  const TileId t = d.add(kb);
  use(d, t, 1, Access::read);
  use(d, t, 2, Access::read);
  const auto steps = d.acquire(t, host_memory, Access::write);
  EXPECT_TRUE(copies(steps).empty());
  EXPECT_EQ(drops(steps), (Drops{{t, 1}, {t, 2}}));
  EXPECT_EQ(d.state(t, 1), CopyState::invalid);
  EXPECT_EQ(d.state(t, 2), CopyState::invalid);
  EXPECT_TRUE(d.host_valid(t));
  EXPECT_EQ(use(d, t, 1, Access::read), (std::vector<Copy>{{t, 0, 1, false}}));
}

TEST(TileDirectory, EvictionDropsTheLeastRecentlyUsedAndWritesBackOnlyDirtyTiles) {
  TileDirectory d({3 * kb});
  const TileId a = d.add(kb);
  const TileId b = d.add(kb);
  const TileId c = d.add(kb);
  const TileId e = d.add(kb);
  use(d, a, 1, Access::read);        // clean
  use(d, b, 1, Access::read_write);  // dirty
  use(d, c, 1, Access::read);        // clean
  use(d, a, 1, Access::read);        // a is now more recent than b and c
  // e needs room: b is the least recently used and dirty, so it is written back first, then its
  // memory goes, then e comes in.
  const auto steps = d.acquire(e, 1, Access::read);
  d.release(e, 1);
  EXPECT_EQ(copies(steps), (std::vector<Copy>{{b, 1, 0, true}, {e, 0, 1, false}}));
  ASSERT_EQ(steps.size(), 3U);
  EXPECT_EQ(steps[1].kind, TransferKind::drop);
  EXPECT_EQ(drops(steps), (Drops{{b, 1}}));
  EXPECT_TRUE(d.host_valid(b));
  EXPECT_EQ(d.state(b, 1), CopyState::invalid);
  // Next c (clean): dropped with no copy.
  const TileId f = d.add(kb);
  const auto clean = d.acquire(f, 1, Access::write);
  d.release(f, 1);
  EXPECT_TRUE(copies(clean).empty());
  EXPECT_EQ(drops(clean), (Drops{{c, 1}}));
  EXPECT_EQ(d.state(c, 1), CopyState::invalid);
  EXPECT_EQ(d.counters().evictions, 2U);
  EXPECT_EQ(d.counters().write_backs, 1U);
  EXPECT_EQ(d.counters().to_host_bytes, kb);
  EXPECT_EQ(d.counters().to_device_bytes, 4 * kb);  // a, b, c, e once each
  EXPECT_EQ(d.used_bytes(1), 3 * kb);
}

TEST(TileDirectory, AnOwnedCopyEvictedLeavesItsSharersValid) {
  TileDirectory d({kb, 10 * kb});
  const TileId t = d.add(kb);
  const TileId u = d.add(kb);
  use(d, t, 1, Access::write);
  use(d, t, 2, Access::read);  // 1 owns, 2 shares
  EXPECT_EQ(use(d, u, 1, Access::read), (std::vector<Copy>{{t, 1, 0, true}, {u, 0, 1, false}}));
  EXPECT_TRUE(d.host_valid(t));
  EXPECT_EQ(d.state(t, 2), CopyState::shared);
  EXPECT_TRUE(use(d, t, 2, Access::read).empty());
}

TEST(TileDirectory, TilesInUseAreNeverEvicted) {
  TileDirectory d({2 * kb});
  const TileId a = d.add(kb);
  const TileId b = d.add(kb);
  const TileId c = d.add(kb);
  d.acquire(a, 1, Access::read);  // held
  use(d, b, 1, Access::read);
  EXPECT_EQ(use(d, c, 1, Access::read), (std::vector<Copy>{{c, 0, 1, false}}));
  EXPECT_EQ(d.state(a, 1), CopyState::shared);
  EXPECT_EQ(d.state(b, 1), CopyState::invalid);
  d.acquire(c, 1, Access::read);
  // Both held: a third tile has no room.
  const TileId e = d.add(kb);
  try {
    d.acquire(e, 1, Access::read);
    FAIL() << "no error";
  } catch (const hit::Error& err) {
    EXPECT_EQ(err.kind(), hit::ErrorKind::out_of_memory);
    EXPECT_NE(std::string(err.what()).find("2000 of them held by tiles in use"), std::string::npos)
        << err.what();
  }
}

TEST(TileDirectory, FlushBringsEveryDirtyTileHomeOnce) {
  TileDirectory d({10 * kb, 10 * kb});
  std::vector<TileId> t;
  for (int i = 0; i < 4; ++i) t.push_back(d.add(kb));
  use(d, t[0], 1, Access::read_write);
  use(d, t[1], 2, Access::write);
  use(d, t[2], 1, Access::read);
  EXPECT_EQ(copies(d.flush_all()), (std::vector<Copy>{{t[0], 1, 0, false}, {t[1], 2, 0, false}}));
  EXPECT_TRUE(d.flush_all().empty());
  EXPECT_EQ(d.state(t[0], 1), CopyState::shared);
  EXPECT_TRUE(d.flush(t[3]).empty());
}

TEST(TileDirectory, BadInputIsAnError) {
  TileDirectory d({kb});
  const TileId t = d.add(kb);
  const TileId big = d.add(2 * kb);
  EXPECT_THROW(d.acquire(t, 2, Access::read), hit::Error);
  EXPECT_THROW(d.acquire(t, -1, Access::read), hit::Error);
  EXPECT_THROW(d.acquire(7, 1, Access::read), hit::Error);
  EXPECT_THROW(d.release(t, 1), hit::Error);  // not acquired
  try {
    d.acquire(big, 1, Access::read);
    FAIL() << "no error";
  } catch (const hit::Error& err) {
    EXPECT_EQ(err.kind(), hit::ErrorKind::out_of_memory);
  }
}

}  // namespace

namespace {

// The worked example of docs/runtime.md, "Coherence": four tiles, a device with room for three.
TEST(TileDirectory, TheWorkedExampleOfTheDocs) {
  constexpr std::size_t mb = 1000 * 1000;
  TileDirectory d({3 * mb});
  const TileId A = d.add(mb), B = d.add(mb), C = d.add(mb), D = d.add(mb);
  // A task: acquire its tiles in order, then release them all (the task ended).
  const auto task = [&](std::vector<std::pair<TileId, Access>> uses) {
    std::vector<Copy> made;
    for (const auto& [t, m] : uses) {
      const auto c = copies(d.acquire(t, 1, m));
      made.insert(made.end(), c.begin(), c.end());
    }
    for (const auto& [t, m] : uses) d.release(t, 1);
    return made;
  };
  using S = CopyState;
  const auto states = [&] {
    return std::vector<CopyState>{d.state(A, 1), d.state(B, 1), d.state(C, 1), d.state(D, 1)};
  };
  EXPECT_EQ(task({{A, Access::read_write}}), (std::vector<Copy>{{A, 0, 1, false}}));
  EXPECT_EQ(task({{B, Access::read_write}}), (std::vector<Copy>{{B, 0, 1, false}}));
  EXPECT_EQ(task({{C, Access::read}}), (std::vector<Copy>{{C, 0, 1, false}}));
  EXPECT_EQ(states(), (std::vector<CopyState>{S::modified, S::modified, S::shared, S::invalid}));
  // 4: room for D; B is the least recently used of the copies not in use, and dirty.
  EXPECT_EQ(task({{A, Access::read}, {D, Access::write}}), (std::vector<Copy>{{B, 1, 0, true}}));
  EXPECT_EQ(states(), (std::vector<CopyState>{S::modified, S::invalid, S::shared, S::modified}));
  // 5: room for B again; C is the least recently used now, and clean: dropped with no copy.
  EXPECT_EQ(task({{B, Access::read}}), (std::vector<Copy>{{B, 0, 1, false}}));
  EXPECT_EQ(states(), (std::vector<CopyState>{S::modified, S::shared, S::invalid, S::modified}));
  EXPECT_TRUE(task({{D, Access::read}}).empty());
  EXPECT_EQ(copies(d.flush_all()), (std::vector<Copy>{{A, 1, 0, false}, {D, 1, 0, false}}));
  EXPECT_EQ(states(), (std::vector<CopyState>{S::shared, S::shared, S::invalid, S::shared}));
  EXPECT_EQ(d.counters().to_device_bytes, 4 * mb);
  EXPECT_EQ(d.counters().to_host_bytes, 3 * mb);
  EXPECT_EQ(d.counters().evictions, 2U);
  EXPECT_EQ(d.counters().write_backs, 1U);
}

}  // namespace
