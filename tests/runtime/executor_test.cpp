// The executor: random task graphs on several places, each place with its own memory (a buffer
// per tile), copies made as the tile directory lists them; whatever order the tasks run in, the
// results are bit for bit those of the program order, every task starts after its predecessors
// ended, each tile is copied in once and back once when nothing evicts it, the critical path
// runs first, a failing task stops the run with its error, and the tasks of a message place end
// after they start, on the calling thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/runtime/executor.hpp"

namespace {

using hit::runtime::Access;
using hit::runtime::ExecutionReport;
using hit::runtime::Place;
using hit::runtime::TaskGraph;
using hit::runtime::TaskId;
using hit::runtime::TileAccess;
using hit::runtime::TileDirectory;
using hit::runtime::TileId;
using hit::runtime::Transfer;

constexpr std::size_t elements = 64;
using Buffer = std::vector<double>;

// A program: tasks of a few tiles each, read or written at random.
struct Program {
  TaskGraph graph;
  int tiles = 0;
};

Program random_program(std::uint32_t seed, int tiles, int tasks) {
  std::mt19937 rng(seed);
  Program p;
  p.tiles = tiles;
  std::uniform_int_distribution<int> tile(0, tiles - 1);
  std::uniform_int_distribution<int> count(1, 3);
  std::uniform_int_distribution<int> mode(1, 3);
  for (int t = 0; t < tasks; ++t) {
    std::vector<TileAccess> a;
    const int n = count(rng);
    for (int k = 0; k < n; ++k) a.push_back({tile(rng), static_cast<Access>(mode(rng))});
    p.graph.add(a, 1.0 + t % 3);
  }
  return p;
}

// What task t does to the buffers it sees: every written tile becomes a function of the task,
// the tile's old contents (read-write) and every tile the task reads, in a fixed order that
// does not commute (a stale or reordered input changes the result).
void compute(const TaskGraph& g, TaskId t, std::vector<Buffer*>& tile) {
  const auto& acc = g.accesses(t);
  for (const TileAccess& w : acc) {
    if (!hit::runtime::writes(w.mode)) continue;
    Buffer out(elements);
    for (std::size_t e = 0; e < elements; ++e) {
      double x = static_cast<double>(t) + 0.25 * static_cast<double>(e);
      for (const TileAccess& r : acc) {
        if (hit::runtime::reads(r.mode))
          x = x * 0.75 + (*tile[static_cast<std::size_t>(r.tile)])[e];
      }
      out[e] = x;
    }
    *tile[static_cast<std::size_t>(w.tile)] = out;
  }
}

std::vector<Buffer> initial(int tiles) {
  std::vector<Buffer> b(static_cast<std::size_t>(tiles), Buffer(elements));
  for (int i = 0; i < tiles; ++i)
    for (std::size_t e = 0; e < elements; ++e) b[static_cast<std::size_t>(i)][e] = i + 0.5 * e;
  return b;
}

std::vector<Buffer> in_program_order(const Program& p) {
  std::vector<Buffer> b = initial(p.tiles);
  std::vector<Buffer*> view;
  for (Buffer& x : b) view.push_back(&x);
  for (std::size_t t = 0; t < p.graph.size(); ++t) compute(p.graph, static_cast<TaskId>(t), view);
  return b;
}

// Every memory (0 the host's, 1.. the devices') holds its own buffer per tile; a transfer copies
// one buffer into another, and the tasks of a place see only its memory's buffers.
struct Memories {
  std::vector<std::vector<Buffer>> memory;
  std::atomic<std::int64_t> copies{0};
  Memories(int memories, int tiles) {
    memory.push_back(initial(tiles));
    for (int m = 1; m < memories; ++m)
      memory.emplace_back(static_cast<std::size_t>(tiles), Buffer(elements, -1e300));
  }
  void move(const Transfer& x) {
    Buffer& to = memory[static_cast<std::size_t>(x.to)][static_cast<std::size_t>(x.tile)];
    if (x.kind == hit::runtime::TransferKind::drop) {
      // Freed: poisoned, so that a task reading a copy the directory gave up fails the test.
      std::fill(to.begin(), to.end(), std::numeric_limits<double>::quiet_NaN());
      return;
    }
    to = memory[static_cast<std::size_t>(x.from)][static_cast<std::size_t>(x.tile)];
    ++copies;
  }
  std::vector<Buffer*> view(int m) {
    std::vector<Buffer*> v;
    for (Buffer& x : memory[static_cast<std::size_t>(m)]) v.push_back(&x);
    return v;
  }
};

void expect_dependencies_respected(const TaskGraph& g, const ExecutionReport& r) {
  for (std::size_t t = 0; t < g.size(); ++t) {
    for (const TaskId p : g.predecessors(static_cast<TaskId>(t))) {
      EXPECT_LT(r.records[static_cast<std::size_t>(p)].ended, r.records[t].started)
          << "task " << t << " started before its predecessor " << p << " ended";
    }
  }
}

// Runs `p` on the host (2 workers) and two devices (1 worker each) with device memories of
// `capacity` bytes; tasks placed round robin.
void run_and_compare(const Program& p, std::size_t capacity, std::uint32_t seed) {
  const std::vector<Place> places = {{0, 2}, {1, 1}, {2, 1}};
  std::vector<int> place_of(p.graph.size());
  std::mt19937 rng(seed);
  for (int& x : place_of) x = std::uniform_int_distribution<int>(0, 2)(rng);
  TileDirectory dir({capacity, capacity});
  for (int i = 0; i < p.tiles; ++i) dir.add(elements * sizeof(double));
  Memories mem(3, p.tiles);
  const auto report = hit::runtime::execute(
      p.graph, places, place_of,
      [&](TaskId t, int place) {
        std::vector<Buffer*> v = mem.view(places[static_cast<std::size_t>(place)].memory);
        compute(p.graph, t, v);
      },
      dir, [&](const Transfer& x) { mem.move(x); });
  for (const Transfer& x : dir.flush_all()) mem.move(x);
  EXPECT_EQ(mem.memory[0], in_program_order(p)) << "seed " << seed;
  expect_dependencies_respected(p.graph, report);
  std::int64_t ran = 0;
  for (const auto& pl : report.places) ran += pl.tasks;
  EXPECT_EQ(ran, static_cast<std::int64_t>(p.graph.size()));
}

TEST(Executor, RandomGraphsGiveTheProgramOrdersResultsBitForBit) {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    run_and_compare(random_program(seed, 8, 120), 64 * elements * sizeof(double), seed);
  }
}

TEST(Executor, RandomGraphsStayRightWhenDeviceMemoryEvicts) {
  // Room for 4 of the 8 tiles (a task uses at most 3): evictions write dirty tiles back.
  for (std::uint32_t seed = 21; seed <= 30; ++seed) {
    run_and_compare(random_program(seed, 8, 120), 4 * elements * sizeof(double), seed);
  }
}

TEST(Executor, TasksPlacedWhenReadyGoWhereTheyFinishFirst) {
  // 22 independent tasks, all ready at once: 1 s each on place 0, 10 s on place 1. Each goes where
  // its place's backlog plus its cost ends first: ten on place 0 (the tenth ties at 10 s, and the
  // earlier place wins), the eleventh on place 1 (11 > 10), nine more and one tie on place 0, the
  // last on place 1 again.
  TaskGraph g;
  for (TileId t = 0; t < 22; ++t) g.add({{t, Access::write}});
  const std::vector<Place> places = {{0, 1}, {0, 1}};
  const std::vector<int> place_of(g.size(), hit::runtime::any_place);
  TileDirectory dir({});
  for (int i = 0; i < 22; ++i) dir.add(8);
  const auto r = hit::runtime::execute(
      g, places, place_of, [](TaskId, int) {}, dir, [](const Transfer&) {},
      [](TaskId, int place) { return place == 0 ? 1.0 : 10.0; });
  std::vector<TaskId> slow;
  for (const auto& rec : r.records)
    if (rec.place == 1) slow.push_back(rec.task);
  EXPECT_EQ(slow, (std::vector<TaskId>{10, 21}));
}

TEST(Executor, APlaceWhereATaskCannotRunNeverGetsIt) {
  TaskGraph g;
  for (TileId t = 0; t < 12; ++t) g.add({{t % 3, Access::read_write}});
  const std::vector<Place> places = {{0, 1}, {0, 2}};
  const std::vector<int> place_of(g.size(), hit::runtime::any_place);
  TileDirectory dir({});
  for (int i = 0; i < 3; ++i) dir.add(8);
  // Odd tasks only on place 0; place 1 is cheaper for the others.
  const auto cost = [](TaskId t, int place) { return place == 1 ? (t % 2 ? 0.0 : 0.5) : 1.0; };
  const auto r = hit::runtime::execute(
      g, places, place_of, [](TaskId, int) {}, dir, [](const Transfer&) {}, cost);
  for (const auto& rec : r.records) {
    if (rec.task % 2) {
      EXPECT_EQ(rec.place, 0) << "task " << rec.task;
    }
  }
  const auto none = [](TaskId t, int place) { return t == 4 && place >= 0 ? -1.0 : 1.0; };
  try {
    hit::runtime::execute(
        g, places, place_of, [](TaskId, int) {}, dir, [](const Transfer&) {}, none);
    FAIL() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("task 4 can run on none of the 2 places"),
              std::string::npos)
        << e.what();
  }
}

TEST(Executor, RandomGraphsPlacedWhenReadyStayRight) {
  // The random programs again, every task placed when ready on random costs per place: wherever
  // the tasks land, the coherence protocol keeps the results those of the program order.
  for (std::uint32_t seed = 41; seed <= 48; ++seed) {
    const Program p = random_program(seed, 8, 120);
    const std::vector<Place> places = {{0, 2}, {1, 1}, {2, 1}};
    const std::vector<int> place_of(p.graph.size(), hit::runtime::any_place);
    TileDirectory dir({4 * elements * sizeof(double), 64 * elements * sizeof(double)});
    for (int i = 0; i < p.tiles; ++i) dir.add(elements * sizeof(double));
    Memories mem(3, p.tiles);
    std::vector<double> costs(p.graph.size() * 3);
    std::mt19937 rng(seed);
    for (double& c : costs) c = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    const auto report = hit::runtime::execute(
        p.graph, places, place_of,
        [&](TaskId t, int place) {
          std::vector<Buffer*> v = mem.view(places[static_cast<std::size_t>(place)].memory);
          compute(p.graph, t, v);
        },
        dir, [&](const Transfer& x) { mem.move(x); },
        [&](TaskId t, int place) { return costs[static_cast<std::size_t>(t) * 3 + place]; });
    for (const Transfer& x : dir.flush_all()) mem.move(x);
    EXPECT_EQ(mem.memory[0], in_program_order(p)) << "seed " << seed;
    expect_dependencies_respected(p.graph, report);
    std::vector<int> used(3, 0);
    for (const auto& r : report.records) ++used[static_cast<std::size_t>(r.place)];
    for (int pl = 0; pl < 3; ++pl) EXPECT_GT(used[static_cast<std::size_t>(pl)], 0) << seed;
  }
}

TEST(Executor, EachTileMovesInOnceAndBackOnce) {
  // Ten updates of each of 6 tiles, all on one device with room for every tile.
  TaskGraph g;
  for (int round = 0; round < 10; ++round)
    for (TileId t = 0; t < 6; ++t) g.add({{t, Access::read_write}, {(t + 1) % 6, Access::read}});
  TileDirectory dir({1 << 20});
  const std::size_t bytes = elements * sizeof(double);
  for (int i = 0; i < 6; ++i) dir.add(bytes);
  const std::vector<Place> places = {{1, 1}};
  const std::vector<int> place_of(g.size(), 0);
  std::int64_t copies = 0;
  hit::runtime::execute(
      g, places, place_of, [](TaskId, int) {}, dir,
      [&](const Transfer& x) {
        if (x.kind != hit::runtime::TransferKind::drop) ++copies;
      });
  const auto back = dir.flush_all();
  EXPECT_EQ(dir.counters().to_device_bytes, 6 * bytes);
  EXPECT_EQ(dir.counters().to_host_bytes, 6 * bytes);
  EXPECT_EQ(back.size(), 6U);
  EXPECT_EQ(copies, 6);
}

TEST(Executor, TheCriticalPathRunsFirst) {
  // One worker, two ready tasks: a long chain hangs below task 1, nothing below task 0.
  TaskGraph g;
  g.add({{0, Access::write}}, 1);
  g.add({{1, Access::write}}, 1);
  for (int i = 0; i < 4; ++i) g.add({{1, Access::read_write}}, 1);
  const std::vector<Place> places = {{0, 1}};
  const std::vector<int> place_of(g.size(), 0);
  const auto r = hit::runtime::execute(g, places, place_of, [](TaskId, int) {});
  EXPECT_LT(r.records[1].started, r.records[0].started);
}

TEST(Executor, AFailingTaskStopsTheRunWithItsError) {
  TaskGraph g;
  for (int i = 0; i < 20; ++i) g.add({{0, Access::read_write}});
  const std::vector<Place> places = {{0, 2}};
  const std::vector<int> place_of(g.size(), 0);
  std::atomic<int> ran{0};
  try {
    hit::runtime::execute(g, places, place_of, [&](TaskId t, int) {
      ++ran;
      if (t == 5) throw hit::Error(hit::ErrorKind::device_failed, "task 5 failed");
    });
    FAIL() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device_failed);
    EXPECT_STREQ(e.what(), "task 5 failed");
  }
  EXPECT_EQ(ran.load(), 6);  // a chain: nothing after the failed task started
}

// A device place's next ready tasks have their tiles acquired while the place computes: with
// four independent tasks behind a first one on one device worker, later tasks' tiles are
// acquired before the task before them ended; where the device holds only what a running task
// needs, nothing is prefetched and the run still fits.
TEST(Executor, ADevicePlacesNextTasksAcquireTheirTilesWhileItComputes) {
  for (const std::size_t tiles_of_room : {std::size_t{16}, std::size_t{2}}) {
    TaskGraph g;
    g.add({{0, Access::read_write}});
    for (int i = 1; i <= 4; ++i) g.add({{0, Access::read}, {i, Access::read_write}});
    const std::vector<Place> places = {{0, 1}, {1, 1}};
    const std::vector<int> place_of(g.size(), 1);
    TileDirectory dir({tiles_of_room * elements * sizeof(double)});
    for (int i = 0; i < 5; ++i) dir.add(elements * sizeof(double));
    Memories mem(2, 5);
    const Program p{g, 5};
    const auto report = hit::runtime::execute(
        g, places, place_of,
        [&](TaskId t, int place) {
          std::vector<Buffer*> v = mem.view(places[static_cast<std::size_t>(place)].memory);
          compute(g, t, v);
        },
        dir, [&](const Transfer& x) { mem.move(x); });
    for (const Transfer& x : dir.flush_all()) mem.move(x);
    EXPECT_EQ(mem.memory[0], in_program_order(p));
    std::int64_t early = 0;
    for (std::size_t t = 0; t < g.size(); ++t) {
      const auto& r = report.records[t];
      EXPECT_LE(r.acquired, r.started) << "task " << t;
      for (std::size_t u = 0; u < g.size(); ++u) {
        // Acquired before another task on the device ended, which started before it.
        const auto& o = report.records[u];
        if (u != t && o.started < r.started && r.acquired < o.ended) ++early;
      }
    }
    if (tiles_of_room == 16) {
      EXPECT_GT(report.places[1].prefetched, 0);
      EXPECT_GT(early, 0);
    } else {
      EXPECT_EQ(report.places[1].prefetched, 0);
      EXPECT_EQ(early, 0);
    }
  }
}

// A message place: its tasks end a few polls after they start, on the thread that called
// execute; the other tasks still respect them as predecessors and successors.
TEST(Executor, MessageTasksEndLaterOnTheCallingThreadAndKeepTheOrder) {
  for (std::uint32_t seed = 41; seed <= 46; ++seed) {
    const Program p = random_program(seed, 6, 80);
    std::mt19937 rng(seed);
    const std::vector<Place> places = {{0, 2}, {0, 1}};
    std::vector<int> place_of(p.graph.size());
    for (int& x : place_of) x = std::uniform_int_distribution<int>(0, 1)(rng);
    Memories mem(1, p.tiles);
    const std::thread::id caller = std::this_thread::get_id();
    std::vector<std::pair<TaskId, int>> in_flight;  // task, polls left
    bool off_thread = false;
    const hit::runtime::Messages messages{
        .place = 1,
        .start =
            [&](TaskId t) {
              off_thread = off_thread || std::this_thread::get_id() != caller;
              std::vector<Buffer*> v = mem.view(0);
              compute(p.graph, t, v);  // done at once, reported a few polls later
              in_flight.emplace_back(t, static_cast<int>(t % 4));
            },
        .poll =
            [&](std::vector<TaskId>& ended) {
              off_thread = off_thread || std::this_thread::get_id() != caller;
              for (auto& [t, left] : in_flight) {
                if (left-- == 0) ended.push_back(t);
              }
              std::erase_if(in_flight, [](const auto& f) { return f.second < 0; });
            }};
    const auto report = hit::runtime::execute(p.graph, places, place_of,
                                              [&](TaskId t, int) {
                                                std::vector<Buffer*> v = mem.view(0);
                                                compute(p.graph, t, v);
                                              },
                                              {.messages = &messages});
    EXPECT_FALSE(off_thread);
    EXPECT_EQ(mem.memory[0], in_program_order(p)) << "seed " << seed;
    expect_dependencies_respected(p.graph, report);
    std::int64_t on_messages = 0;
    for (const int x : place_of) on_messages += x == 1;
    EXPECT_EQ(report.places[1].tasks, on_messages);
  }
}

TEST(Executor, BadPlacesAreAnError) {
  TaskGraph g;
  g.add({{0, Access::read}});
  const std::vector<int> one = {0};
  const auto none = [](TaskId, int) {};
  EXPECT_THROW(hit::runtime::execute(g, std::vector<Place>{}, one, none), hit::Error);
  EXPECT_THROW(hit::runtime::execute(g, std::vector<Place>{{0, 0}}, one, none), hit::Error);
  EXPECT_THROW(hit::runtime::execute(g, std::vector<Place>{{0, 1}}, std::vector<int>{1}, none),
               hit::Error);
  EXPECT_THROW(hit::runtime::execute(g, std::vector<Place>{{0, 1}}, std::vector<int>{}, none),
               hit::Error);
  try {
    hit::runtime::execute(g, std::vector<Place>{{0, 1}}, std::vector<int>{hit::runtime::any_place},
                          none);
    FAIL() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a TaskCost"), std::string::npos) << e.what();
  }
  const hit::runtime::Messages elsewhere{
      .place = 1, .start = [](TaskId) {}, .poll = [](std::vector<TaskId>&) {}};
  EXPECT_THROW(
      hit::runtime::execute(g, std::vector<Place>{{0, 1}}, one, none, {.messages = &elsewhere}),
      hit::Error);
  const std::vector<double> two = {1.0, 2.0};
  EXPECT_THROW(hit::runtime::execute(g, std::vector<Place>{{0, 1}}, one, none, {.priority = two}),
               hit::Error);
  TileDirectory dir({1024});
  dir.add(8);
  EXPECT_THROW(
      hit::runtime::execute(g, std::vector<Place>{{2, 1}}, one, none, dir, [](const Transfer&) {}),
      hit::Error);
}

}  // namespace
