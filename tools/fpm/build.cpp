// hit-fpm build: benchmark a built-in kernel over a size range on every rank's device and write
// one model file per rank.
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include "../common/cli.hpp"
#include "hit/balance/benchmark.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/device.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/program.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"
#include "subcommands.hpp"

namespace hit_fpm {

using hit::Error;
using hit::ErrorKind;
namespace balance = hit::balance;
namespace fpm = hit::fpm;

namespace {

std::vector<std::int64_t> sizes(const BuildOptions& o) {
  if (o.min < 1)
    throw Error(ErrorKind::invalid_argument, fmt::format("--min {} must be >= 1", o.min));
  if (o.max < o.min) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--max {} must be >= --min {}", o.max, o.min));
  }
  if (o.points < 1 || o.points > 10000) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--points {} (allowed 1 to 10000)", o.points));
  }
  std::vector<std::int64_t> out;
  for (int i = 0; i < o.points; ++i) {
    const double f = o.points == 1 ? 1.0 : static_cast<double>(i) / (o.points - 1);
    double x = 0;
    if (o.spacing == "linear") {
      x = static_cast<double>(o.min) + f * static_cast<double>(o.max - o.min);
    } else if (o.spacing == "log") {
      x = std::exp(
          std::log(static_cast<double>(o.min)) +
          f * (std::log(static_cast<double>(o.max)) - std::log(static_cast<double>(o.min))));
    } else {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--spacing '{}' (allowed: linear, log)", o.spacing));
    }
    out.push_back(std::clamp<std::int64_t>(std::llround(x), o.min, o.max));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The output file of one rank: {rank} is the rank, {device} its device ("emu2", "cuda0", "cpu1").
std::string output_path(const std::string& pattern, const hit::RankPlacement& r) {
  return hit::cli::replace_all(hit::cli::replace_all(pattern, "{rank}", std::to_string(r.rank)),
                               "{device}",
                               fmt::format("{}{}", hit::to_string(r.device.kind), r.device.index));
}

// Every rank's output file. Every rank's file name is known everywhere (the placements are), so
// a pattern that would make two ranks write one file is refused on all ranks alike.
std::vector<std::string> output_paths(const std::string& pattern,
                                      const hit::PhysicalTopology& topo) {
  std::vector<std::string> paths;
  for (const hit::RankPlacement& r : topo.ranks()) paths.push_back(output_path(pattern, r));
  for (std::size_t i = 0; i < paths.size(); ++i) {
    for (std::size_t j = i + 1; j < paths.size(); ++j) {
      if (paths[i] == paths[j]) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("--out '{}' gives ranks {} and {} the same file '{}': put {{rank}} "
                                "(or {{device}} when every rank has its own device) in it",
                                pattern, i, j, paths[i]));
      }
    }
  }
  return paths;
}

// The annotations of a model file: what was measured, where and when.
void describe(fpm::Model& model, const hit::Environment& env, const hit::PhysicalTopology& topo,
              const hit::Device& dev, const balance::BenchmarkKernel& kernel,
              std::int64_t largest) {
  const hit::RankPlacement& me = topo.mine();
  model.set_info("kernel", kernel.name);
  model.set_info("device",
                 fmt::format("{} (rank {} of {}, node {}, host {}{})", dev.label(), env.rank(),
                             env.size(), me.node, me.host,
                             me.sharing > 1 ? fmt::format(", shared by {} ranks", me.sharing)
                                            : std::string()));
  if (!me.description.empty()) model.set_info("device_description", me.description);
  model.set_info("binding",
                 fmt::format("{} ({})",
                             topo.binding_spec().empty() ? hit::format_device_spec(topo.bindings())
                                                         : topo.binding_spec(),
                             topo.binding_source()));
  model.set_info("date", now_iso());
  // The mean over the largest size (spmv's rows on the grid's faces have fewer nonzeros).
  model.set_info("flops_per_unit",
                 fmt::format("{}", kernel.complexity(largest) / static_cast<double>(largest)));
  model.set_info("timing",
                 "hit::launch records: staging, execution and copy-back, without "
                 "waiting for the device lock");
}

}  // namespace

int run_build(hit::Environment& env, const BuildOptions& o) {
  const std::vector<std::int64_t> ds = sizes(o);
  if (!o.devices.empty()) env.config().set("devices", o.devices);
  // Collective: every rank learns the binding of every rank (and its node) before they diverge.
  const hit::PhysicalTopology& topo = hit::PhysicalTopology::of(env);
  balance::LaunchKernelOptions ko;
  ko.block = o.block;
  ko.columns = o.columns;
  ko.partition = o.partition;
  ko.resident = o.resident;
  if (o.resident && o.kernel == "gemm") {
    // gemm stages its blocks as FuPerMod's benchmark does; spmv is always resident.
    throw hit::Error(hit::ErrorKind::invalid_argument,
                     "--resident applies to --kernel jacobi (spmv keeps its data on the device "
                     "anyway; gemm stages its blocks)");
  }
  balance::BenchmarkKernel kernel;
  hit::collectively(env.comm(), [&] { kernel = balance::launch_kernel(env, o.kernel, ko); });

  const std::string pattern = o.out.empty() ? fmt::format("fpm-{}-{{rank}}.csv", o.kernel) : o.out;
  const std::vector<std::string> paths = output_paths(pattern, topo);
  const std::string path = paths[static_cast<std::size_t>(env.rank())];
  hit::collectively(env.comm(), [&] { hit::check_output_path(path, "model file (--out)"); });
  balance::Precision precision;
  precision.rel_ci = o.precision;
  precision.min_reps = o.min_reps;
  precision.max_reps = o.max_reps;
  precision.max_seconds = o.max_time;

  fpm::Model model(fpm::ModelKind::piecewise);
  if (o.capacity >= 0) model.set_capacity(o.capacity);
  // A device with a memory limit holds only so many units: that is its capacity.
  const hit::Device& dev = hit::device(env);
  if (dev.capacity() != std::numeric_limits<std::uint64_t>::max()) {
    model.set_capacity(std::min(model.capacity(), balance::units_that_fit(kernel, dev.capacity())));
  }
  describe(model, env, topo, dev, kernel, ds.back());

  const bool progress = env.rank() == 0 && !o.quiet && isatty(fileno(stderr));
  std::int64_t limit = model.capacity();  // sizes above it are not measured here
  for (std::size_t k = 0; k < ds.size(); ++k) {
    const std::int64_t d = ds[k] <= limit ? ds[k] : 0;
    if (progress) {
      const int width = 30;
      const auto done = static_cast<int>(width * k / ds.size());
      std::fprintf(stderr, "\r[%s%s] %zu/%zu  d = %lld   ",
                   std::string(static_cast<std::size_t>(done), '#').c_str(),
                   std::string(static_cast<std::size_t>(width - done), '.').c_str(), k, ds.size(),
                   static_cast<long long>(ds[k]));
      std::fflush(stderr);
    }
    const balance::Measurement m = balance::measure(kernel, d, precision, topo.node_comm());
    std::exception_ptr failure = m.failure;
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::out_of_memory) {
          // The device holds less: record that as its capacity and measure no larger sizes.
          limit = d - 1;
          model.set_capacity(limit);
          failure = nullptr;
        }
      } catch (...) {
      }
    }
    hit::agree(env.comm(), failure);
    if (m.measured()) model.add(m.point);
  }
  if (progress)
    std::fprintf(stderr, "\r[%s] %zu/%zu done%20s\n", std::string(30, '#').c_str(), ds.size(),
                 ds.size(), "");
  hit::collectively(env.comm(), [&] {
    if (model.empty()) {
      throw Error(ErrorKind::device,
                  fmt::format("no size could be measured (capacity {}); nothing written to '{}'",
                              model.capacity(), path));
    }
    fpm::save_model(path, model);
  });
  if (env.rank() == 0) {
    fmt::print("wrote {} model file{} ({} sizes, kernel {}): {}\n", env.size(),
               env.size() > 1 ? "s" : "", ds.size(), kernel.name, env.size() > 1 ? pattern : path);
    if (!o.quiet) {
      for (std::size_t r = 0; r < paths.size(); ++r) {
        fmt::print("  rank {}: {} -> {}\n", r, topo.ranks()[r].label(), paths[r]);
      }
    }
  }
  return hit::exit_ok;
}

}  // namespace hit_fpm
