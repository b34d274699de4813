// hit-bench-launch: the overhead of hit::launch itself: an empty kernel (a cpu body that does
// nothing) over a small tile, one in() and one inout() Resident argument, launched again and again
// on the device this process is bound to (--devices / HIT_DEVICES), for the partitions `single`,
// `threads:threads=2` and `threads:threads=4`. Each repetition times --launches launches; the
// figure is microseconds per launch, median, min and max over --reps repetitions.
//
// The reference, in the same run: what the `threads` partition's host threads cost when every
// launch started and joined them (the behaviour before the persistent pool): t-1 std::threads
// started and joined around the caller's own chunk, with an empty body.
//
// Prints one JSON line.
//   hit-bench-launch [--devices cpu:0] [--n 64] [--launches 2000] [--reps 7] [--warmup 200]
//                    [--partitions single,threads:threads=2,threads:threads=4]
//                    [--reference-calls 500]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/program.hpp"
#include "hit/resident.hpp"
#include "hit/tile.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return {v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]), v.front(), v.back()};
}

nlohmann::json to_json(const Summary& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

// Microseconds per call of `fn`, `calls` calls per repetition, after `warmup` untimed calls.
template <class F>
Summary time_per_call(int warmup, int calls, int reps, F&& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < calls; ++i) fn();
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() / calls);
  }
  return summarise(std::move(us));
}

// The host threads of the `threads` partition as they were before the pool: per call, t-1 threads
// started, the caller's chunk, every thread joined, errors collected per chunk.
void spawn_and_join(std::int64_t n, int threads) {
  const std::int64_t t = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  volatile std::int64_t sink = 0;
  const auto run = [&](std::int64_t w) {
    try {
      for (std::int64_t i = w * n / t; i < (w + 1) * n / t; ++i) sink = i;
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::int64_t w = 1; w < t; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App cli(
      "hit-bench-launch: microseconds per hit::launch of an empty kernel on this process's "
      "device, for the single and threads partitions, as one JSON line");
  std::string devices;
  long n = 64;
  int launches = 2000;
  int reps = 7;
  int warmup = 200;
  std::vector<std::string> partitions{"single", "threads:threads=2", "threads:threads=4"};
  int reference_calls = 500;
  cli.add_option("--devices", devices, "device binding of the process (HIT_DEVICES)");
  cli.add_option("--n", n, "the tile is n x n doubles")
      ->capture_default_str()
      ->check(hit::cli::count(4, 1 << 14));
  cli.add_option("--launches", launches, "launches per timed repetition")
      ->capture_default_str()
      ->check(hit::cli::count(1, 10000000));
  cli.add_option("--reps", reps, "timed repetitions (median, min and max are reported)")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  cli.add_option("--warmup", warmup, "untimed launches before each case")
      ->capture_default_str()
      ->check(hit::cli::count(0, 10000000));
  cli.add_option("--partitions", partitions, "partition specs to time, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cli.add_option("--reference-calls", reference_calls,
                 "calls per timed repetition of the reference (0: no reference)")
      ->capture_default_str()
      ->check(hit::cli::count(0, 10000000));
  if (!hit::cli::parse(cli, argc, argv, env.rank(), "hit-bench-launch")) return hit::exit_ok;
  if (!devices.empty()) env.config().set("devices", devices);

  hit::Device& dev = hit::device(env);
  const hit::Shape shape = hit::Shape::extents({n, n});
  hit::Tile<double> a_host(shape), b_host(shape);
  a_host.fill(1.0);
  b_host.fill(2.0);
  hit::Resident<double> a(a_host, env), b(b_host, env);

  hit::Kernel<hit::View<const double>, hit::View<double>> empty("empty");
  empty.cpu([](const hit::KernelContext&, hit::View<const double>, hit::View<double>) {});
  empty.reads({hit::AccessPattern::parse("0,0"), hit::AccessPattern::parse("0,0")});

  // The launch log keeps a record of each launch (as in any program); it is part of the cost.
  nlohmann::json cases = nlohmann::json::array();
  for (const std::string& spec : partitions) {
    const hit::Partition part = hit::partition(spec, shape, {.access = empty.access()});
    const Summary s = time_per_call(warmup, launches, reps,
                                    [&] { hit::launch(empty, part, hit::in(a), hit::inout(b)); });
    cases.push_back(
        {{"partition", spec}, {"threads", part.threads()}, {"us_per_launch", to_json(s)}});
  }
  b.sync_to_host();

  // The reference: per-call thread start and join, as many threads as the partitions above.
  nlohmann::json reference = nlohmann::json::array();
  for (int t : {2, 4}) {
    if (reference_calls == 0) break;
    const Summary s =
        time_per_call(std::min(warmup, 50), reference_calls, reps, [&] { spawn_and_join(n, t); });
    reference.push_back({{"what", "spawn+join"}, {"threads", t}, {"us_per_call", to_json(s)}});
  }

  if (env.rank() == 0) {
    const nlohmann::json out = {{"app", "launch"},
                                {"device", dev.label()},
                                {"n", n},
                                {"launches", launches},
                                {"reps", reps},
                                {"warmup", warmup},
                                {"cores", dev.cores()},
                                {"hardware_threads", std::thread::hardware_concurrency()},
                                {"cases", cases},
                                {"reference", reference},
                                {"check", b.host().at(hit::Index{0, 0})}};
    std::printf("%s\n", out.dump().c_str());
  }
  return hit::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-bench-launch", body);
}
