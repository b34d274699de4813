// hit-fpm partition, show and plot: what model files say.
#include <fmt/format.h>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/fpm/plot.hpp"
#include "hit/program.hpp"
#include "subcommands.hpp"

namespace hit_fpm {

using hit::Error;
using hit::ErrorKind;
namespace fpm = hit::fpm;

namespace {

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

}  // namespace

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

}  // namespace hit_fpm
