// hit-fpm: build, inspect, use and draw functional performance models (docs/fpm.md; FuPerMod).
//
//   hit-fpm build --kernel gemm|jacobi --min D --max D [--points K] [--out PATTERN]
//                 [--devices SPEC] ...
//   hit-fpm partition --model FILE [--model FILE ...] --n N [--algorithm NAME] [--json]
//   hit-fpm show --model FILE [--json]
//   hit-fpm plot --model FILE [--model FILE ...] --out FILE.svg [--n N] [--algorithm NAME]
//   hit-fpm hierarchical --n N [--block B] [--method fpm|multiple-cpm|single-cpm|homogeneous]
//                 [--models DIR] [--devices SPEC] [--nodes K] [--json] ...
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../common/cli.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/core/program.hpp"
#include "hit/device.hpp"
#include "hit/device_params.hpp"
#include "hit/fpm/benchmark.hpp"
#include "hit/fpm/hierarchical.hpp"
#include "hit/fpm/kernels.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/fpm/plot.hpp"
#include "hit/physical_topology.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;
namespace fpm = hit::fpm;

struct BuildOptions {
  std::string kernel = "gemm";
  int block = 64;
  std::int64_t columns = 4096;
  std::string partition;
  std::string devices;
  std::int64_t min = 1;
  std::int64_t max = 0;
  int points = 10;
  std::string spacing = "linear";
  std::string out;
  double precision = 0.025;
  int min_reps = 3;
  int max_reps = 20;
  double max_time = 2.0;
  std::int64_t capacity = -1;
  bool quiet = false;
};

struct HierarchicalCli {
  std::int64_t n = 0;
  int block = 64;
  int panel = 0;
  std::string method = "fpm";
  double eps = 0.05;
  double device_eps = 0.05;
  int iterations = 10;
  int device_iterations = 10;
  std::string algorithm;
  std::string models;
  std::string devices;
  int nodes = -1;
  double precision = 0.025;
  int min_reps = 3;
  int max_reps = 20;
  double max_time = 0.5;
  bool block_columns = false;
  bool json = false;
};

struct ModelOptions {
  std::vector<std::string> files;
  std::string kind = "piecewise";
  std::int64_t n = 0;
  bool has_n = false;
  std::string algorithm = "geometric";
  bool json = false;
  std::string out;
  std::string title;
};

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

std::string replace_all(std::string text, const std::string& what, const std::string& with) {
  for (auto pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + with.size())) {
    text.replace(pos, what.size(), with);
  }
  return text;
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
  return replace_all(replace_all(pattern, "{rank}", std::to_string(r.rank)), "{device}",
                     fmt::format("{}{}", hit::to_string(r.device.kind), r.device.index));
}

int run_build(hit::Environment& env, const BuildOptions& o) {
  const std::vector<std::int64_t> ds = sizes(o);
  if (!o.devices.empty()) env.config().set("devices", o.devices);
  // Collective: every rank learns the binding of every rank (and its node) before they diverge.
  const hit::PhysicalTopology& topo = hit::PhysicalTopology::of(env);
  fpm::LaunchKernelOptions ko;
  ko.block = o.block;
  ko.columns = o.columns;
  ko.partition = o.partition;
  fpm::BenchmarkKernel kernel;
  hit::collectively(env.comm(), [&] { kernel = fpm::launch_kernel(env, o.kernel, ko); });

  const std::string pattern = o.out.empty() ? fmt::format("fpm-{}-{{rank}}.csv", o.kernel) : o.out;
  // Every rank's file name is known everywhere (the placements are), so a pattern that would make
  // two ranks write one file is refused on all ranks alike.
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
  const std::string path = paths[static_cast<std::size_t>(env.rank())];
  hit::collectively(env.comm(), [&] { hit::check_output_path(path, "model file (--out)"); });
  fpm::Precision precision;
  precision.rel_ci = o.precision;
  precision.min_reps = o.min_reps;
  precision.max_reps = o.max_reps;
  precision.max_seconds = o.max_time;

  fpm::Model model(fpm::ModelKind::piecewise);
  if (o.capacity >= 0) model.set_capacity(o.capacity);
  // A device with a memory limit holds only so many units: that is its capacity.
  const hit::Device& dev = hit::device(env);
  if (dev.capacity() != std::numeric_limits<std::uint64_t>::max()) {
    model.set_capacity(std::min(model.capacity(), fpm::units_that_fit(kernel, dev.capacity())));
  }
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
  model.set_info("flops_per_unit", fmt::format("{}", kernel.complexity(1)));
  model.set_info("timing",
                 "hit::launch records: staging, execution and copy-back, without "
                 "waiting for the device lock");

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
    const fpm::Measurement m = fpm::measure(kernel, d, precision, topo.node_comm());
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

std::vector<fpm::Model> load_all(hit::Environment& env, const ModelOptions& o) {
  if (o.files.empty()) {
    throw Error(ErrorKind::invalid_argument, "no models: give one --model FILE per device");
  }
  const fpm::ModelKind kind = fpm::parse_model_kind(o.kind);
  std::vector<fpm::Model> models;
  hit::collectively(env.comm(), [&] {
    for (const std::string& f : o.files) models.push_back(fpm::load_model(f, kind));
  });
  return models;
}

int run_partition(hit::Environment& env, const ModelOptions& o) {
  const std::vector<fpm::Model> models = load_all(env, o);
  fpm::Distribution dist;
  hit::collectively(env.comm(), [&] { dist = fpm::partition(o.algorithm, models, o.n); });
  if (env.rank() != 0) return hit::exit_ok;
  if (o.json) {
    nlohmann::json parts = nlohmann::json::array();
    for (std::size_t i = 0; i < dist.parts.size(); ++i) {
      const fpm::Part& p = dist.parts[i];
      nlohmann::json part;
      part["d"] = p.d;
      part["t"] = std::isfinite(p.t) ? nlohmann::json(p.t) : nlohmann::json(nullptr);
      // Declared capacities, so a device given 0 units because it takes none can be told from one
      // the partitioner left idle.
      if (models[i].capacity() != fpm::unlimited) part["capacity"] = models[i].capacity();
      parts.push_back(part);
    }
    nlohmann::json j;
    j["n"] = dist.n;
    j["algorithm"] = dist.algorithm;
    j["parts"] = parts;
    j["makespan"] = dist.makespan;
    j["imbalance"] = fpm::imbalance(dist.parts);
    j["spread"] = fpm::spread(dist.parts);
    fmt::print("{}\n", j.dump());
    return hit::exit_ok;
  }
  fmt::print("{} units over {} devices, algorithm {}\n", dist.n, dist.parts.size(), dist.algorithm);
  fmt::print("{:>6}  {:<32} {:>14} {:>8} {:>14}\n", "device", "model", "units", "share",
             "predicted t/s");
  for (std::size_t i = 0; i < dist.parts.size(); ++i) {
    const fpm::Part& p = dist.parts[i];
    const double share =
        dist.n > 0 ? 100.0 * static_cast<double>(p.d) / static_cast<double>(dist.n) : 0;
    fmt::print("{:>6}  {:<32} {:>14} {:>7.2f}% {:>14.6g}\n", i, o.files[i], p.d, share, p.t);
  }
  fmt::print(
      "makespan {:.6g} s, predicted imbalance {:.3f} (max/mean time), spread {:.3g} "
      "((max - min)/min time)\n",
      dist.makespan, fpm::imbalance(dist.parts), fpm::spread(dist.parts));
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].capacity() == 0) {
      fmt::print("device {} ({}) takes no units: its model declares capacity 0\n", i, o.files[i]);
    }
  }
  return hit::exit_ok;
}

int run_show(hit::Environment& env, const ModelOptions& o) {
  const std::vector<fpm::Model> models = load_all(env, o);
  if (env.rank() != 0) return hit::exit_ok;
  nlohmann::json all = nlohmann::json::array();
  for (std::size_t k = 0; k < models.size(); ++k) {
    const fpm::Model& m = models[k];
    double flops = 0;
    if (auto it = m.info().find("flops_per_unit"); it != m.info().end()) {
      try {
        flops = std::stod(it->second);
      } catch (...) {
        flops = 0;
      }
    }
    if (o.json) {
      nlohmann::json j;
      j["file"] = o.files[k];
      j["kind"] = std::string(fpm::to_string(m.kind()));
      j["capacity"] =
          m.capacity() == fpm::unlimited ? nlohmann::json(nullptr) : nlohmann::json(m.capacity());
      j["info"] = m.info();
      j["monotone"] = m.monotone();
      nlohmann::json pts = nlohmann::json::array();
      for (const fpm::Point& p : m.points()) {
        pts.push_back({{"d", p.d},
                       {"t", p.t},
                       {"reps", p.reps},
                       {"ci", p.ci},
                       {"speed", static_cast<double>(p.d) / p.t}});
      }
      j["points"] = pts;
      all.push_back(j);
      continue;
    }
    fmt::print("{} ({} model)\n", o.files[k], fpm::to_string(m.kind()));
    for (const auto& [key, value] : m.info()) fmt::print("  {}: {}\n", key, value);
    fmt::print("  capacity: {}\n", m.capacity() == fpm::unlimited ? std::string("unlimited")
                                                                  : std::to_string(m.capacity()));
    fmt::print("  {:>12} {:>14} {:>6} {:>12} {:>16}{}\n", "d", "t/s", "reps", "ci/s", "units/s",
               flops > 0 ? fmt::format(" {:>10}", "GFLOP/s") : "");
    for (const fpm::Point& p : m.points()) {
      const double speed = static_cast<double>(p.d) / p.t;
      fmt::print("  {:>12} {:>14.6g} {:>6} {:>12.3g} {:>16.6g}{}\n", p.d, p.t, p.reps, p.ci, speed,
                 flops > 0 ? fmt::format(" {:>10.4g}", speed * flops * 1e-9) : "");
    }
    fmt::print("  time never decreases: {}\n",
               m.monotone() ? "yes" : "no (partitioners use its running maximum)");
  }
  if (o.json) fmt::print("{}\n", all.size() == 1 ? all[0].dump() : all.dump());
  return hit::exit_ok;
}

int run_plot(hit::Environment& env, const ModelOptions& o) {
  const std::vector<fpm::Model> models = load_all(env, o);
  // Before partitioning: a picture that cannot be written is found first.
  hit::collectively(env.comm(), [&] {
    if (env.rank() == 0) hit::check_output_path(o.out, "picture (--out)");
  });
  std::optional<fpm::Distribution> dist;
  if (o.has_n) {
    hit::collectively(env.comm(), [&] { dist = fpm::partition(o.algorithm, models, o.n); });
  }
  if (env.rank() != 0) return hit::exit_ok;
  fpm::PlotOptions po;
  po.title = o.title.empty() ? (dist ? fmt::format("Speed functions and the {} partition of n = {}",
                                                   dist->algorithm, dist->n)
                                     : std::string("Speed functions"))
                             : o.title;
  for (const std::string& f : o.files)
    po.labels.push_back(std::filesystem::path(f).filename().string());
  fpm::write_file_atomically(o.out, fpm::speed_plot_svg(models, dist, po));
  fmt::print("wrote {}\n", o.out);
  return hit::exit_ok;
}

nlohmann::json step_json(const fpm::HierarchicalStep& s) {
  return {{"iteration", s.iteration},
          {"target_areas", s.target_areas},
          {"areas", s.areas},
          {"node_seconds", s.node_seconds},
          {"spread", s.spread},
          {"columns", s.columns},
          {"device_seconds", s.device_seconds},
          {"device_iterations", s.device_iterations},
          {"device_status", s.device_status}};
}

int run_hierarchical(hit::Environment& env, const HierarchicalCli& c) {
  if (!c.devices.empty()) env.config().set("devices", c.devices);
  if (c.nodes >= 0) env.config().set("nodes", std::to_string(c.nodes));
  fpm::HierarchicalOptions o;
  o.n = c.n;
  o.block = c.block;
  o.panel = c.panel;
  o.method = fpm::parse_hierarchical_method(c.method);
  o.node_eps = c.eps;
  o.device_eps = c.device_eps;
  o.max_iterations = c.iterations;
  o.device_iterations = c.device_iterations;
  o.algorithm = c.algorithm;
  o.models_dir = c.models;
  o.block_columns = c.block_columns;
  o.precision.rel_ci = c.precision;
  o.precision.min_reps = c.min_reps;
  o.precision.max_reps = c.max_reps;
  o.precision.max_seconds = c.max_time;
  const fpm::HierarchicalPartition r = fpm::partition_hierarchical(env, o);
  if (env.rank() != 0) return hit::exit_ok;
  if (c.json) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : r.steps) steps.push_back(step_json(s));
    const nlohmann::json j = {{"method", std::string(fpm::to_string(r.method))},
                              {"n", c.n},
                              {"block", c.block},
                              {"spec", r.spec},
                              {"status", std::string(fpm::to_string(r.status))},
                              {"areas", r.areas},
                              {"weights", r.weights},
                              {"node_of_rank", r.node_of_rank},
                              {"seconds", r.seconds},
                              {"models_loaded", r.models_loaded},
                              {"steps", steps}};
    fmt::print("{}\n", j.dump());
    return hit::exit_ok;
  }
  fmt::print(
      "{} partitioning of a {}x{} product (b = {}) over {} nodes: {} after {} step{} "
      "({:.2f} s{})\n",
      fpm::to_string(r.method), c.n, c.n, c.block,
      r.node_of_rank.empty() ? 0
                             : *std::max_element(r.node_of_rank.begin(), r.node_of_rank.end()) + 1,
      fpm::to_string(r.status), r.steps.size(), r.steps.size() == 1 ? "" : "s", r.seconds,
      r.models_loaded ? ", models loaded" : "");
  for (const auto& s : r.steps) {
    std::string nodes;
    for (std::size_t i = 0; i < s.areas.size(); ++i) {
      nodes += fmt::format("{}node {}: {} blocks in {:.4f} s", i ? "; " : "", i, s.areas[i],
                           s.node_seconds[i]);
    }
    fmt::print("  step {}: {} (spread {:.3f})\n", s.iteration, nodes, s.spread);
  }
  fmt::print("layout: {}\n", r.spec);
  return hit::exit_ok;
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App app{
      "hit-fpm: functional performance models — build them by benchmarking, partition "
      "work with them, show and plot them"};
  app.require_subcommand(1);
  BuildOptions b;
  ModelOptions m;

  auto* build = app.add_subcommand("build",
                                   "benchmark a built-in kernel over a size range on every "
                                   "rank's device and write one model file per rank");
  build
      ->add_option("--kernel", b.kernel,
                   "gemm (block update, FuPerMod §4.1) or jacobi (5-point row update), run "
                   "through hit::launch on each rank's device")
      ->capture_default_str();
  build->add_option("--block", b.block, "gemm block size b (a unit is one b×b block update)")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  build->add_option("--columns", b.columns, "jacobi row length N (a unit is one row of N cells)")
      ->capture_default_str()
      ->check(hit::cli::count(1));
  build->add_option("--partition", b.partition,
                    "partition of the launches (default: single for gemm, threads for jacobi)");
  build->add_option("--devices", b.devices,
                    "device binding of the ranks (HIT_DEVICES), e.g. 'emu:0(slowdown=4),cpu'");
  build->add_option("--min", b.min, "smallest size, in units")
      ->capture_default_str()
      ->check(hit::cli::count(1));
  build->add_option("--max", b.max, "largest size, in units")
      ->required()
      ->check(hit::cli::count(1));
  build->add_option("--points", b.points, "number of sizes")
      ->capture_default_str()
      ->check(hit::cli::count(1, 10000));
  build->add_option("--spacing", b.spacing, "linear or log")
      ->capture_default_str()
      ->check(CLI::IsMember({"linear", "log"}));
  build
      ->add_option("--out", b.out,
                   "output file; {rank} is replaced by the rank, {device} by its device "
                   "(e.g. emu2) (default fpm-<kernel>-{rank}.csv)")
      ->check(hit::cli::file_name());
  build->add_option("--precision", b.precision, "relative half-width of the confidence interval")
      ->capture_default_str()
      ->check(hit::cli::real_above(0, 1));
  build->add_option("--min-reps", b.min_reps, "repetitions at least")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  build->add_option("--max-reps", b.max_reps, "repetitions at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  build->add_option("--max-time", b.max_time, "seconds of repetitions per size at most")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  build->add_option("--capacity", b.capacity, "declare the most units the device holds")
      ->check(hit::cli::count(0));
  build->add_flag("--quiet", b.quiet, "no progress bar");

  auto add_model_options = [&](CLI::App* sub, bool many) {
    sub->add_option("--model,-m", m.files,
                    many ? "a model file, one per device, in device order"
                         : "a model file (repeat to show several)")
        ->required();
    sub->add_option("--kind", m.kind, "interpolation: piecewise, akima or constant")
        ->capture_default_str();
  };
  auto* part = app.add_subcommand("partition", "split n units over the devices of the models");
  add_model_options(part, true);
  part->add_option("--n", m.n, "units to distribute")->required()->check(hit::cli::count(0));
  part->add_option(
          "--algorithm,-a", m.algorithm,
          "even, proportional, geometric, numerical, exact or dp (with :key=value options)")
      ->capture_default_str();
  part->add_flag("--json", m.json, "one JSON object on stdout");

  auto* show = app.add_subcommand("show", "print a model's points and derived speeds");
  add_model_options(show, false);
  show->add_flag("--json", m.json, "JSON instead of a table");

  auto* plot = app.add_subcommand("plot", "draw speed functions (and a partition) as SVG");
  add_model_options(plot, true);
  plot->add_option("--out,-o", m.out, "the SVG file to write")
      ->required()
      ->check(hit::cli::file_name());
  auto* n_opt =
      plot->add_option("--n", m.n, "also draw the partition of n units")->check(hit::cli::count(0));
  plot->add_option("--algorithm,-a", m.algorithm, "partitioner for --n")->capture_default_str();
  plot->add_option("--title", m.title, "picture title");

  HierarchicalCli h;
  auto* hier = app.add_subcommand(
      "hierarchical",
      "partition a square matrix product over the nodes (column-based rectangles) and each "
      "node's devices (column slices) by running its panel kernel on the bound devices (INPA "
      "and IDPA, or a baseline); prints the layout spec");
  hier->add_option("--n", h.n, "C is n x n")->required()->check(hit::cli::count(1));
  hier->add_option("--block,-b", h.block, "block size b")
      ->capture_default_str()
      ->check(hit::cli::count(1, 4096));
  hier->add_option("--panel", h.panel,
                   "inner dimension of the measured panel step (the application's panel width; "
                   "default: b)")
      ->check(hit::cli::count(1, 4096));
  hier->add_option("--method", h.method, "fpm, multiple-cpm, single-cpm or homogeneous")
      ->capture_default_str()
      ->check(CLI::IsMember({"fpm", "multiple-cpm", "single-cpm", "homogeneous"}));
  hier->add_option("--eps", h.eps, "node-level balance: largest spread of the node times")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  hier->add_option("--device-eps", h.device_eps, "device-level balance inside each node")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  hier->add_option("--iterations", h.iterations, "node-level steps at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  hier->add_option("--device-iterations", h.device_iterations,
                   "device-level steps at most, per node-level step")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  hier->add_option("--algorithm,-a", h.algorithm,
                   "partitioner (default: geometric for fpm, proportional for the CPM methods)");
  hier->add_option("--models", h.models,
                   "folder of the models: read when present, written after every step");
  hier->add_option("--devices", h.devices, "device binding of the ranks (HIT_DEVICES)");
  hier->add_option("--nodes", h.nodes, "ranks per emulated node (HIT_NODES; 0: the real nodes)")
      ->check(hit::cli::count(0));
  hier->add_option("--precision", h.precision, "relative half-width of the confidence interval")
      ->capture_default_str()
      ->check(hit::cli::real_above(0, 1));
  hier->add_option("--min-reps", h.min_reps, "repetitions at least")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  hier->add_option("--max-reps", h.max_reps, "repetitions at most")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  hier->add_option("--max-time", h.max_time, "seconds of repetitions per measurement at most")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  hier->add_flag("--block-columns", h.block_columns,
                 "a device's unit is one b-wide block column (default: one element column)");
  hier->add_flag("--json", h.json, "one JSON object on stdout");

  // CLI11 would call an unknown first word "a missing subcommand".
  const auto known = [](const std::string& word) {
    return word == "build" || word == "partition" || word == "show" || word == "plot" ||
           word == "hierarchical";
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    throw Error(ErrorKind::parse, fmt::format("unknown subcommand '{}' (subcommands: build, "
                                              "partition, show, plot, hierarchical; see hit-fpm "
                                              "--help)",
                                              hit::excerpt(argv[1])));
  }
  if (!hit::cli::parse(app, argc, argv, env.rank(), "hit-fpm")) return hit::exit_ok;
  m.has_n = n_opt->count() > 0;
  // Partitioner names are checked before any model is read or measured (plot checks its --algorithm
  // even without --n, where it would draw no partition).
  if (*part || *plot) fpm::check_partitioner(m.algorithm);
  if (*hier && !h.algorithm.empty()) fpm::check_partitioner(h.algorithm);
  if (*build) return run_build(env, b);
  if (*part) return run_partition(env, m);
  if (*hier) return run_hierarchical(env, h);
  if (*show) return run_show(env, m);
  return run_plot(env, m);
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-fpm", body);
}
