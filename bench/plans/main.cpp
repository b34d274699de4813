// hit-bench-plans: what building communication plans costs each process at large process counts,
// simulated in one process as hit-layout's dry run does. For P processes on a mesh2d grid over
// an n×n array laid out by `blocks`, a sample of ranks spread over the grid computes what its
// halo plan and its redistribute plans (to other layouts) would hold — peers and elements, with
// the library functions the builders themselves call (hit/comm/comm_traffic.hpp) — and the time per
// process is reported, beside the old way of finding redistribute peers (a scan of every
// process's blocks) and the peak resident memory. Prints one JSON line.
//   hit-bench-plans [--procs 1024,4096,16384,65536] [--n 65536] [--samples 64]
//                   [--min-seconds 0.05] [--scan-limit 65536] [--columns2d-limit 16384]
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "hit/comm/comm_traffic.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/layout.hpp"
#include "hit/program.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_binding.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Where the timed loops leave what they computed, so that the compiler keeps the work.
volatile std::size_t sink = 0;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

// `count` ranks spread over the grid: evenly along the rank order, each moved on by 37 ranks more
// than the one before, so that the sample is not one column of the grid and edges, corners and
// interiors all appear.
std::vector<int> sample_ranks(const hit::Topology& topo, int count) {
  std::vector<int> out;
  const int p = topo.grid_size();
  for (int i = 0; i < count && i < p; ++i) {
    const long long base = static_cast<long long>(i) * p / std::min(count, p);
    out.push_back(static_cast<int>((base + 37LL * i) % p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct Figures {
  double us_per_proc = 0;  // mean time per sampled process
  double peers_mean = 0;
  int peers_max = 0;
  double sent_mean = 0;  // elements
  double received_mean = 0;
};

// Runs `plan` over the sample until `min_seconds` have passed (at least once), and sums what the
// plans hold from the first pass.
Figures measure(const std::vector<int>& ranks, double min_seconds,
                const std::function<std::vector<hit::PeerTraffic>(int)>& plan) {
  Figures f;
  long long peers = 0;
  double sent = 0;
  double received = 0;
  for (int r : ranks) {
    const auto t = plan(r);
    peers += static_cast<long long>(t.size());
    f.peers_max = std::max(f.peers_max, static_cast<int>(t.size()));
    for (const auto& x : t) {
      sent += static_cast<double>(x.sent);
      received += static_cast<double>(x.received);
    }
  }
  const auto n = static_cast<double>(ranks.size());
  f.peers_mean = static_cast<double>(peers) / n;
  f.sent_mean = sent / n;
  f.received_mean = received / n;
  long long calls = 0;
  std::size_t held = 0;  // kept so that the plans are not optimised away
  const auto t0 = Clock::now();
  double elapsed = 0;
  do {
    for (int r : ranks) held += plan(r).size();
    calls += static_cast<long long>(ranks.size());
    elapsed = seconds_since(t0);
  } while (elapsed < min_seconds);
  sink = held;
  f.us_per_proc = elapsed / static_cast<double>(calls) * 1e6;
  return f;
}

// The way redistribute found its peers before Layout::procs_meeting: every process's blocks
// tested against this process's (the intersections themselves are not formed).
std::vector<hit::PeerTraffic> scanned_peers(const hit::Layout& from, const hit::Layout& to,
                                            int rank) {
  std::vector<hit::PeerTraffic> out;
  const auto& my_from = from.blocks(rank);
  const auto& my_to = to.blocks(rank);
  for (int peer = 0; peer < from.procs(); ++peer) {
    hit::index_t sent = 0;
    hit::index_t received = 0;
    for (const auto& a : my_from) {
      for (const auto& b : to.blocks(peer)) sent += a.intersect(b).size();
    }
    for (const auto& a : from.blocks(peer)) {
      for (const auto& b : my_to) received += a.intersect(b).size();
    }
    if (sent > 0 || received > 0) out.push_back({peer, sent, received});
  }
  return out;
}

using Json = nlohmann::ordered_json;

Json figures_json(const Figures& f) {
  return {{"us_per_proc", f.us_per_proc},
          {"peers_mean", f.peers_mean},
          {"peers_max", f.peers_max},
          {"sent_elements_mean", f.sent_mean},
          {"received_elements_mean", f.received_mean}};
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const int p = std::stoi(item);
    if (p < 1) throw hit::Error(hit::ErrorKind::invalid_argument, "--procs: " + item);
    out.push_back(p);
  }
  return out;
}

struct Options {
  std::string procs = "1024,4096,16384,65536";
  long long n = 65536;
  int samples = 64;
  double min_seconds = 0.05;
  int scan_limit = 65536;
  int columns2d_limit = 16384;
};

// A layout by spec over `topo` for a plan of another run (no devices of this one), with the
// seconds it took to build.
hit::Layout timed_layout(hit::Environment& /*env*/, const std::string& spec,
                         const hit::Topology& topo, const hit::Shape& shape, double& seconds) {
  const auto t0 = Clock::now();
  hit::Layout l = hit::layout(
      spec, topo, shape,
      {.devices = std::vector<hit::DeviceBinding>(static_cast<std::size_t>(topo.procs()))});
  seconds = seconds_since(t0);
  return l;
}

Json one_count(hit::Environment& env, const Options& o, int procs) {
  const hit::Shape shape = hit::Shape::extents({o.n, o.n});
  const hit::Topology mesh = hit::topology("mesh2d", procs);
  double build_s = 0;
  const hit::Layout from = timed_layout(env, "blocks", mesh, shape, build_s);
  const std::vector<int> ranks = sample_ranks(mesh, o.samples);
  Json out = {{"procs", procs},
              {"dims", mesh.dims()},
              {"sampled_ranks", ranks.size()},
              {"layout", "blocks on " + mesh.str()},
              {"layout_build_s", build_s}};
  out["halo"] = figures_json(measure(
      ranks, o.min_seconds, [&](int r) { return hit::halo_traffic(from, r, {.width = 1}); }));
  // What hit-layout --comm halo computes for each rank (it sums what the ranks receive).
  out["dry_run_faces"] = figures_json(measure(ranks, o.min_seconds, [&](int r) {
    return hit::face_traffic(from, r, 1, hit::FaceSides::received);
  }));
  // Targets: the same blocks on a grid of another shape (twice the rows, half the columns:
  // binary searches on both sides), rows (dimBlocks) and columns2d's rectangles (box trees).
  const int rows = mesh.dim(0);
  const int cols = mesh.dim(1);
  struct Target {
    std::string spec;
    hit::Topology topo;
  };
  std::vector<Target> targets;
  if (cols % 2 == 0) {
    targets.push_back({"blocks", hit::topology("mesh:dims=" + std::to_string(2 * rows) + "x" +
                                                   std::to_string(cols / 2),
                                               procs)});
  }
  targets.push_back({"dimBlocks:dim=0", mesh});
  if (procs <= o.columns2d_limit) {
    // Unequal weights (equal ones would give the grid itself): columns of rectangles of three
    // sizes, whose edges meet the grid's blocks anywhere.
    std::string w;
    for (int p = 0; p < procs; ++p) w += (p ? "," : "") + std::to_string(1 + p % 3);
    targets.push_back({"columns2d:w=" + w, mesh});
  }
  Json list = Json::array();
  for (const Target& t : targets) {
    double to_s = 0;
    const hit::Layout to = timed_layout(env, t.spec, t.topo, shape, to_s);
    // columns2d's weights are thousands of numbers: the report names their pattern.
    const std::string spec =
        t.spec.rfind("columns2d", 0) == 0 ? "columns2d:w=1,2,3,1,2,3..." : t.spec;
    Json item = {{"to", spec + " on " + to.topology().str()}, {"layout_build_s", to_s}};
    item["plan"] = figures_json(measure(
        ranks, o.min_seconds, [&](int r) { return hit::redistribute_traffic(from, to, r); }));
    if (procs <= o.scan_limit) {
      item["scan"] = figures_json(
          measure(ranks, o.min_seconds, [&](int r) { return scanned_peers(from, to, r); }));
    }
    list.push_back(std::move(item));
  }
  out["redistribute"] = std::move(list);
  out["peak_rss_mib"] = peak_rss_mib();
  return out;
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App cli(
      "hit-bench-plans: the cost per process of building halo and redistribute plans for P "
      "processes simulated in one, as one JSON line");
  Options o;
  cli.add_option("--procs", o.procs, "process counts, comma-separated")->capture_default_str();
  cli.add_option("--n", o.n, "the array is n x n")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1LL << 31));
  cli.add_option("--samples", o.samples, "ranks sampled per process count")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1 << 20));
  cli.add_option("--min-seconds", o.min_seconds, "time each measurement for at least this long")
      ->capture_default_str();
  cli.add_option("--scan-limit", o.scan_limit,
                 "largest P at which the old scan of every process is timed")
      ->capture_default_str();
  cli.add_option("--columns2d-limit", o.columns2d_limit,
                 "largest P with a columns2d target (its arrangement costs O(P^2) to build)")
      ->capture_default_str();
  if (!hit::cli::parse(cli, argc, argv, env.rank(), "hit-bench-plans")) return hit::exit_ok;
  Json cases = Json::array();
  for (const int p : parse_list(o.procs)) cases.push_back(one_count(env, o, p));
  const Json out = {{"app", "plans"},
                    {"n", o.n},
                    {"samples", o.samples},
                    {"min_seconds", o.min_seconds},
                    {"cases", std::move(cases)}};
  if (env.rank() == 0) std::printf("%s\n", out.dump().c_str());
  return hit::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-bench-plans", body);
}
