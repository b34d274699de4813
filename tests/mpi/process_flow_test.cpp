// hit-test-procs: 1 2 3 4
// The sequential task flow over processes: random task graphs over tiles owned by random
// processes give, on every process, the bits sequential execution in program order gives; each
// process receives each version of another's tile that its tasks read exactly once; tasks that
// write tiles of several processes run on one and send the others' tiles back; a failing
// task poisons its readers on other processes, which skip their bodies, and only its own
// process reports the failure; a tile copy that fails fails its process's run alike, without
// stopping the others.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "hit/hit.hpp"

namespace {

using hit::runtime::Access;
using hit::runtime::HostRows;
using hit::runtime::ProcessFlow;
using hit::runtime::TaskId;
using hit::runtime::TileAccess;
using hit::runtime::TileId;

hit::Environment& env() {
  return hit::Environment::current();
}

constexpr int tile_doubles = 8;

struct RandomTask {
  std::vector<TileAccess> accesses;  // reads first, the written tile last
};

// The same graph on every process: the generator's seed is the trial.
std::vector<RandomTask> random_tasks(std::mt19937& rng, int tiles, int count) {
  std::vector<RandomTask> tasks;
  std::uniform_int_distribution<int> tile(0, tiles - 1);
  std::uniform_int_distribution<int> reads(0, 3);
  for (int t = 0; t < count; ++t) {
    RandomTask task;
    const int w = tile(rng);
    std::set<int> read;
    for (int r = reads(rng); r > 0; --r) {
      const int x = tile(rng);
      if (x != w) read.insert(x);
    }
    for (const int x : read) task.accesses.push_back({x, Access::read});
    task.accesses.push_back({w, Access::read_write});
    tasks.push_back(task);
  }
  return tasks;
}

// The task's arithmetic: not commutative across tasks, so any order that breaks a dependency
// changes the bits.
void compute(TaskId id, const std::vector<const double*>& in, double* out) {
  for (int k = 0; k < tile_doubles; ++k) {
    double v = out[k] * 0.5 + static_cast<double>(id);
    for (std::size_t r = 0; r < in.size(); ++r) v += in[r][k] * static_cast<double>(r + 2);
    out[k] = v;
  }
}

double initial(int tile, int k) {
  return tile * 10.0 + k;
}

TEST(ProcessFlow, RandomGraphsGiveTheBitsOfSequentialExecution) {
  const int size = env().size();
  const int me = env().rank();
  for (int trial = 0; trial < 6; ++trial) {
    std::mt19937 rng(1234 + static_cast<unsigned>(trial));
    const int tiles = 5 + trial;
    std::vector<int> owner(static_cast<std::size_t>(tiles));
    std::uniform_int_distribution<int> proc(0, size - 1);
    for (int& o : owner) o = proc(rng);
    const std::vector<RandomTask> tasks = random_tasks(rng, tiles, 40 + 10 * trial);

    // The reference: every tile on every process, the tasks in program order; and the versions
    // of others' tiles this process's tasks read.
    std::vector<std::vector<double>> reference(static_cast<std::size_t>(tiles));
    for (int g = 0; g < tiles; ++g) {
      for (int k = 0; k < tile_doubles; ++k) reference[g].push_back(initial(g, k));
    }
    std::vector<int> version(static_cast<std::size_t>(tiles), 0);
    std::set<std::pair<int, int>> remote_reads;  // (tile, version)
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto& acc = tasks[t].accesses;
      const int w = static_cast<int>(acc.back().tile);
      std::vector<const double*> in;
      for (std::size_t a = 0; a + 1 < acc.size(); ++a) {
        const int x = static_cast<int>(acc[a].tile);
        in.push_back(reference[x].data());
        if (owner[w] == me && owner[x] != me) remote_reads.insert({x, version[x]});
      }
      compute(static_cast<TaskId>(t), in, reference[w].data());
      ++version[w];
    }

    std::vector<std::vector<double>> mine(static_cast<std::size_t>(tiles));
    std::vector<HostRows> rows;
    for (int g = 0; g < tiles; ++g) {
      HostRows r{nullptr, 1, tile_doubles * sizeof(double), tile_doubles * sizeof(double)};
      if (owner[g] == me) {
        for (int k = 0; k < tile_doubles; ++k) mine[g].push_back(initial(g, k));
        r.data = mine[g].data();
      }
      rows.push_back(r);
    }
    ProcessFlow flow(env().comm(), owner, rows);
    for (const RandomTask& t : tasks) flow.add(t.accesses, 1.0);
    ASSERT_EQ(flow.global_tasks(), tasks.size());

    const std::vector<hit::runtime::Place> places = {{hit::runtime::host_memory, 3}};
    flow.run(places, 0, [&](TaskId t, int) {
      const auto& acc = flow.graph().accesses(t);
      std::vector<const double*> in;
      for (std::size_t a = 0; a + 1 < acc.size(); ++a) {
        in.push_back(static_cast<const double*>(flow.host_rows(flow.local_tile(t, a)).data));
      }
      auto* out = static_cast<double*>(flow.host_rows(flow.local_tile(t, acc.size() - 1)).data);
      compute(flow.global_task(t), in, out);
    });
    EXPECT_FALSE(flow.failure());
    for (int g = 0; g < tiles; ++g) {
      if (owner[g] != me) continue;
      EXPECT_EQ(std::memcmp(mine[g].data(), reference[g].data(), tile_doubles * sizeof(double)), 0)
          << "trial " << trial << ", tile " << g << " on process " << me;
    }
    // Each version of another's tile that its tasks read, once.
    EXPECT_EQ(flow.counters().received, static_cast<std::int64_t>(remote_reads.size()))
        << "trial " << trial;
    EXPECT_EQ(flow.counters().bytes_received, remote_reads.size() * tile_doubles * sizeof(double));
    // Every message sent is received: the totals over the processes agree.
    std::int64_t counts[2] = {flow.counters().sent, flow.counters().received};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, env().comm());
    EXPECT_EQ(counts[0], counts[1]);
  }
}

// A chain through every process: tile p owned by process p; task 0 writes tile 0, task p writes
// tile p from tile p - 1.
struct Chain {
  std::vector<std::vector<double>> storage;  // this process's tile
  ProcessFlow flow;

  Chain() : storage(static_cast<std::size_t>(env().size())), flow(make_flow(storage)) {
    flow.add({{0, Access::read_write}});
    for (int p = 1; p < env().size(); ++p) {
      flow.add({{p - 1, Access::read}, {p, Access::read_write}});
    }
  }

 private:
  static ProcessFlow make_flow(std::vector<std::vector<double>>& storage) {
    std::vector<int> owner;
    std::vector<HostRows> rows;
    for (int p = 0; p < env().size(); ++p) {
      owner.push_back(p);
      storage[static_cast<std::size_t>(p)].assign(tile_doubles, 1.0);
      rows.push_back({p == env().rank() ? storage[static_cast<std::size_t>(p)].data() : nullptr, 1,
                      tile_doubles * sizeof(double), tile_doubles * sizeof(double)});
    }
    return ProcessFlow(env().comm(), owner, rows);
  }
};

TEST(ProcessFlow, AFailingTaskPoisonsItsReadersAndOnlyItsProcessReportsIt) {
  const int size = env().size();
  const int me = env().rank();
  // A chain through every process: task p writes tile p (owned by process p) from tile p - 1.
  // Task 0 fails; every later one reads a poisoned tile and must not run.
  Chain chain;
  ProcessFlow& flow = chain.flow;
  std::atomic<int> ran{0};
  const std::vector<hit::runtime::Place> places = {{hit::runtime::host_memory, 1}};
  flow.run(places, 0, [&](TaskId t, int) {
    if (flow.global_task(t) == 0) {
      throw hit::Error(hit::ErrorKind::invalid_argument, "the first task failed");
    }
    ++ran;
  });
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(static_cast<bool>(flow.failure()), me == 0);
  // The messages still went: every process but the last sent its tile on.
  EXPECT_EQ(flow.counters().sent, me + 1 < size ? 1 : 0);
  try {
    hit::agree(env().comm(), flow.failure());
    ADD_FAILURE() << "agree did not throw";
  } catch (const hit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the first task failed"), std::string::npos) << e.what();
  }
}

TEST(ProcessFlow, ACopyThatFailsFailsItsProcessAndTheOthersStillFinish) {
  const int size = env().size();
  const int me = env().rank();
  const int failing = size - 1;
  // The chain of the test above on a device memory (a tile directory with one device); on the
  // last process every copy to the device fails, as an allocation on a device that others
  // filled does. Thrown to the executor, it would stop that process's graph and leave the others
  // waiting for its messages.
  Chain chain;
  ProcessFlow& flow = chain.flow;
  hit::runtime::TileDirectory directory({std::size_t{1} << 20});
  for (std::size_t i = 0; i < flow.local_tiles(); ++i) {
    directory.add(flow.host_rows(static_cast<TileId>(i)).bytes());
  }
  std::atomic<int> copies{0};
  const hit::runtime::TileMover move = [&](const hit::runtime::Transfer& x) {
    if (x.kind != hit::runtime::TransferKind::copy || x.to == hit::runtime::host_memory) return;
    ++copies;
    if (me == failing) throw hit::Error(hit::ErrorKind::out_of_memory, "the copy in failed");
  };
  std::atomic<int> ran{0};
  const std::vector<hit::runtime::Place> places = {{1, 1}};
  flow.run(places, 0, [&](TaskId, int) { ++ran; }, {.directory = &directory, .move = &move});
  EXPECT_GT(copies.load(), 0);
  // The failing process ran no body; the others, upstream of it, ran theirs.
  EXPECT_EQ(ran.load(), me == failing ? 0 : 1);
  EXPECT_EQ(static_cast<bool>(flow.failure()), me == failing);
  try {
    hit::agree(env().comm(), flow.failure());
    ADD_FAILURE() << "agree did not throw";
  } catch (const hit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the copy in failed"), std::string::npos) << e.what();
  }
}

TEST(ProcessFlow, RefusesTasksThatWriteNothingOrNameNoTile) {
  const int size = env().size();
  std::vector<int> owner = {0, size - 1};
  std::vector<HostRows> rows(2, HostRows{nullptr, 1, 8, 8});
  std::vector<double> a(1), b(1);
  if (env().rank() == 0) rows[0].data = a.data();
  if (env().rank() == size - 1) rows[1].data = b.data();
  ProcessFlow flow(env().comm(), owner, rows);
  EXPECT_THROW(flow.add({{0, Access::read}}), hit::Error);
  EXPECT_THROW(flow.add({{2, Access::read_write}}), hit::Error);
  EXPECT_THROW(ProcessFlow(env().comm(), {size}, {HostRows{}}), hit::Error);
}

// The graph a dry run records: every process the same, each task on the process that owns what
// it writes, its waits with the bytes of the tiles that travel (through their owner when neither
// end owns them) and none for an order between processes that replicas make unnecessary.
TEST(ProcessFlow, TracedGraphNamesEachTasksProcessAndWhatTravels) {
  const int size = env().size();
  const int last = size - 1;
  const int middle = size / 2;
  std::vector<int> owner = {0, last, middle};
  std::vector<HostRows> rows(3, HostRows{nullptr, 1, 64, 64});
  ProcessFlow flow(env().comm(), owner, rows);
  flow.add({{0, Access::read_write}}, 10);                          // 0: on 0
  flow.add({{0, Access::read}, {1, Access::read_write}}, 20);       // 1: on last, tile 0 travels
  flow.add({{1, Access::read}, {0, Access::read_write}}, 30);       // 2: on 0, tile 1 travels
  flow.add({{1, Access::read_write}, {2, Access::read_write}}, 5);  // 3: on middle, writes 1 too
  flow.add({{1, Access::read}, {0, Access::read_write}}, 1);        // 4: on 0, reads 3's tile 1
  const std::vector<hit::TracedTask> g = flow.traced_graph();
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g[0].proc, 0);
  EXPECT_EQ(g[1].proc, last);
  EXPECT_EQ(g[3].proc, middle);
  EXPECT_DOUBLE_EQ(g[2].flops, 30);
  EXPECT_DOUBLE_EQ(g[1].problem_bytes, 128);
  const auto wait_on = [&](std::size_t t, std::int64_t on) -> const hit::TracedTask::Wait* {
    for (const auto& w : g[t].waits) {
      if (w.task == on) return &w;
    }
    return nullptr;
  };
  ASSERT_NE(wait_on(1, 0), nullptr);
  EXPECT_DOUBLE_EQ(wait_on(1, 0)->bytes, last == 0 ? 0 : 64);
  // Task 2 writes tile 0, which task 1 read: across processes the replica makes that no wait.
  ASSERT_NE(wait_on(2, 1), nullptr);  // it reads tile 1, which task 1 wrote
  ASSERT_NE(wait_on(4, 3), nullptr);
  // Tile 1 (owner last) written on `middle` reaches process 0 through its owner when neither
  // 0 nor `middle` owns it.
  const bool through = last != 0 && last != middle && middle != 0;
  EXPECT_EQ(wait_on(4, 3)->via, through ? last : -1);
  if (size > 1) {
    // Process `last` read tile 0 (task 1) and task 2 writes it: no wait between them for that.
    const auto* w = wait_on(2, 1);
    EXPECT_DOUBLE_EQ(w->bytes, 64);  // tile 1 only
  }
}

// A tile of tile_doubles as two rows with a gap between them (a tile of a wider block), as the
// runtime sees it: the gap must never be written.
constexpr int row_doubles = tile_doubles / 2;
constexpr int pitch_doubles = row_doubles + 1;
constexpr double gap = -12345.0;

std::vector<double> load(const HostRows& r) {
  std::vector<double> v(tile_doubles);
  for (std::size_t row = 0; row < r.rows; ++row) {
    std::memcpy(v.data() + row * row_doubles,
                static_cast<const char*>(r.data) + row * r.pitch_bytes, r.row_bytes);
  }
  return v;
}
void store(const std::vector<double>& v, const HostRows& r) {
  for (std::size_t row = 0; row < r.rows; ++row) {
    std::memcpy(static_cast<char*>(r.data) + row * r.pitch_bytes, v.data() + row * row_doubles,
                r.row_bytes);
  }
}

// Tasks that write two tiles, of any owners (a tile QR's update of two tile rows), among tasks
// that write one: the bits of sequential execution on every process, each tile back with its
// owner (into its strided rows, the gap between them untouched), and each written tile of
// another process brought in and sent back once per task.
TEST(ProcessFlow, TasksWritingTilesOfSeveralProcessesGiveTheBitsOfSequentialExecution) {
  const int size = env().size();
  const int me = env().rank();
  for (int trial = 0; trial < 6; ++trial) {
    std::mt19937 rng(4321 + static_cast<unsigned>(trial));
    const int tiles = 4 + trial;
    std::vector<int> owner(static_cast<std::size_t>(tiles));
    std::uniform_int_distribution<int> proc(0, size - 1);
    for (int& o : owner) o = proc(rng);
    std::vector<RandomTask> tasks = random_tasks(rng, tiles, 40 + 10 * trial);
    // Every other task also writes a second tile first (read-write): the runner owns the last.
    std::uniform_int_distribution<int> tile(0, tiles - 1);
    for (std::size_t t = 0; t < tasks.size(); t += 2) {
      auto& acc = tasks[t].accesses;
      const TileId last = acc.back().tile;
      TileId other = tile(rng);
      if (other == last) other = (other + 1) % tiles;
      std::erase_if(acc, [&](const TileAccess& a) { return a.tile == other; });
      acc.insert(acc.end() - 1, {other, Access::read_write});
    }
    // The written tiles of a task: each computed from the read tiles and the written ones
    // before it, in the order listed.
    const auto written = [](const std::vector<TileAccess>& acc) {
      std::vector<std::size_t> w;
      for (std::size_t a = 0; a < acc.size(); ++a) {
        if (hit::runtime::writes(acc[a].mode)) w.push_back(a);
      }
      return w;
    };
    std::vector<std::vector<double>> reference(static_cast<std::size_t>(tiles));
    for (int g = 0; g < tiles; ++g) {
      for (int k = 0; k < tile_doubles; ++k) reference[g].push_back(initial(g, k));
    }
    std::int64_t returns = 0;  // written tiles of another process than the runner, sent back
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto& acc = tasks[t].accesses;
      std::vector<const double*> in;
      for (const TileAccess& a : acc) {
        if (!hit::runtime::writes(a.mode)) in.push_back(reference[a.tile].data());
      }
      for (const std::size_t w : written(acc)) {
        compute(static_cast<TaskId>(t), in, reference[acc[w].tile].data());
        in.push_back(reference[acc[w].tile].data());
        if (owner[acc[w].tile] != owner[acc.back().tile]) ++returns;
      }
    }

    std::vector<std::vector<double>> mine(static_cast<std::size_t>(tiles));
    std::vector<HostRows> rows;
    for (int g = 0; g < tiles; ++g) {
      HostRows r{nullptr, 2, row_doubles * sizeof(double), pitch_doubles * sizeof(double)};
      if (owner[g] == me) {
        mine[g].assign(2 * pitch_doubles, gap);
        r.data = mine[g].data();
        std::vector<double> v;
        for (int k = 0; k < tile_doubles; ++k) v.push_back(initial(g, k));
        store(v, r);
      }
      rows.push_back(r);
    }
    ProcessFlow flow(env().comm(), owner, rows);
    for (const RandomTask& t : tasks) flow.add(t.accesses, 1.0);
    const std::vector<hit::runtime::Place> places = {{hit::runtime::host_memory, 3}};
    flow.run(places, 0, [&](TaskId t, int) {
      const auto& acc = tasks[static_cast<std::size_t>(flow.global_task(t))].accesses;
      std::vector<std::vector<double>> values;  // the read tiles, then each written one
      values.reserve(acc.size());
      for (std::size_t a = 0; a < acc.size(); ++a) {
        if (!hit::runtime::writes(acc[a].mode)) {
          values.push_back(load(flow.host_rows(flow.local_tile(t, a))));
        }
      }
      std::vector<const double*> in;
      for (const auto& v : values) in.push_back(v.data());
      for (const std::size_t w : written(acc)) {
        const HostRows& r = flow.host_rows(flow.local_tile(t, w));
        values.push_back(load(r));
        compute(flow.global_task(t), in, values.back().data());
        store(values.back(), r);
        in.push_back(values.back().data());
      }
    });
    EXPECT_FALSE(flow.failure());
    for (int g = 0; g < tiles; ++g) {
      if (owner[g] != me) continue;
      const HostRows r{mine[g].data(), 2, row_doubles * sizeof(double),
                       pitch_doubles * sizeof(double)};
      EXPECT_EQ(load(r), reference[g])
          << "trial " << trial << ", tile " << g << " on process " << me;
      EXPECT_EQ(mine[g][row_doubles], gap) << "the gap of tile " << g << " was written";
      EXPECT_EQ(mine[g][2 * pitch_doubles - 1], gap) << "past tile " << g << " was written";
    }
    std::int64_t counts[2] = {flow.counters().sent, flow.counters().received};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, env().comm());
    EXPECT_EQ(counts[0], counts[1]);
    // At least the returns travelled (one message each), and nothing at all on one process.
    EXPECT_GE(counts[0], size > 1 ? returns : 0) << "trial " << trial;
    if (size == 1) {
      EXPECT_EQ(counts[0], 0);
    }
  }
}

}  // namespace
