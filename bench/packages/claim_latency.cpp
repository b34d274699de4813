// hit-bench-packages: how long a work-package claim against a rank inside a host kernel takes.
// Rank 1 (bound to host cores) runs --kernels launches of a kernel that computes for --kernel-ms
// each; the other ranks keep claiming one package from rank 1's queue with the dispatch's own
// claim (a survey of every rank's window, then an atomic add on rank 1's counter) and time each,
// one every millisecond. With --hook on, rank 1's device calls the dispatch's progress hook while
// its kernel runs (as work packages install it); with off, MPI progresses on rank 1 only between
// kernels (as before). One JSON line on rank 0: latency percentiles in milliseconds.
//
//   mpiexec.mpich -n 2 build/bin/hit-bench-packages --kernel-ms 100 --kernels 10 --hook on

#include <fmt/format.h>
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "hit/hit.hpp"
#include "packages/claim_queue.hpp"
#include "packages/rma_window.hpp"

namespace {

using hit::index_t;
using clock_type = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto at = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(at, v.size() - 1)];
}

int bench(hit::Environment& env, int argc, char** argv) {
  CLI::App app{"claim latency against a rank inside a host kernel"};
  double kernel_ms = 100;
  int kernels = 10;
  std::string hook = "on";
  app.add_option("--kernel-ms", kernel_ms, "length of one host kernel")
      ->check(CLI::Range(1.0, 1e5));
  app.add_option("--kernels", kernels, "host kernels rank 1 runs")->check(CLI::Range(1, 100000));
  app.add_option("--hook", hook, "on: the progress hook runs during host kernels; off: not")
      ->check(CLI::IsMember({"on", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw hit::Error(hit::ErrorKind::invalid_argument, e.what());
  }
  if (env.size() < 2) {
    throw hit::Error(hit::ErrorKind::invalid_argument,
                     "hit-bench-packages needs 2 or more processes (rank 1 computes, the others "
                     "claim)");
  }
  const MPI_Comm comm = env.comm();
  hit::Device& dev = hit::device(env);  // collective on first use
  // Rank 1's queue holds every package; the others' are empty, so every claim goes to rank 1.
  std::vector<hit::detail::QueueRange> queues(static_cast<std::size_t>(env.size()));
  queues[1] = {0, index_t{1} << 30};
  hit::detail::RmaWindow window(hit::detail::queue_words, comm);
  hit::detail::reset_queue(window, env.rank(), 0);
  hit::barrier(comm);
  std::vector<double> latency_ms;
  {
    hit::detail::RmaEpoch epoch(window.get());
    const double span_s = kernels * kernel_ms * 1e-3;
    hit::barrier(comm);
    if (env.rank() == 1) {
      if (hook == "on") dev.set_wait_hook([comm] { hit::detail::poke_progress(comm); });
      hit::Tile<double> t(hit::Shape::extents({1, 1}));
      hit::Kernel<hit::View<double>> spin("spin");
      spin.cpu([kernel_ms](const hit::KernelContext&, hit::View<double> v) {
        // Computes (no sleeping, no MPI) for kernel_ms.
        const auto end = clock_type::now() + std::chrono::duration<double, std::milli>(kernel_ms);
        double x = 1;
        while (clock_type::now() < end) {
          for (int i = 0; i < 1000; ++i) x = x * 0.999999 + 1e-6;
        }
        v(0, 0) = x;
      });
      const hit::Partition part = hit::partition("single", t.shape());
      // Between kernels MPI progresses (the dispatch polls before each launch): with the hook
      // off, a claim waits for the kernel it arrived during.
      for (int k = 0; k < kernels; ++k) {
        hit::detail::poke_progress(comm);
        hit::launch(spin, part, hit::out(t));
      }
      dev.set_wait_hook({});
    } else if (env.rank() != 1) {
      const std::vector<bool> everyone(queues.size(), true);
      hit::detail::ClaimWalk walk(window, queues, everyone, env.rank());
      const double start = MPI_Wtime();
      while (MPI_Wtime() - start < span_s) {
        const double t0 = MPI_Wtime();
        walk.start_survey();
        walk.wait();
        walk.start(1);
        walk.wait();
        const hit::detail::Claimed won = walk.take();
        latency_ms.push_back((MPI_Wtime() - t0) * 1e3);
        if (won.positions.empty())
          throw hit::Error(hit::ErrorKind::internal, "a claim on rank 1's queue won nothing");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    hit::barrier(comm);
  }
  // Every claiming rank's samples to rank 0.
  const auto count = static_cast<int>(latency_ms.size());
  std::vector<int> counts(static_cast<std::size_t>(env.size()));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<int> offsets(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) offsets[i] = offsets[i - 1] + counts[i - 1];
  std::vector<double> all(env.rank() == 0 ? static_cast<std::size_t>(offsets.back() + counts.back())
                                          : 0);
  MPI_Gatherv(latency_ms.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
              MPI_DOUBLE, 0, comm);
  if (env.rank() == 0) {
    const nlohmann::json out = {{"app", "claim_latency"},
                                {"ranks", env.size()},
                                {"kernel_ms", kernel_ms},
                                {"kernels", kernels},
                                {"hook", hook},
                                {"samples", all.size()},
                                {"p50_ms", percentile(all, 0.5)},
                                {"p99_ms", percentile(all, 0.99)},
                                {"max_ms", percentile(all, 1.0)}};
    fmt::print("{}\n", out.dump());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-bench-packages", bench);
}
