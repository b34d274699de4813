// hit-bench-sparse_halo: time per update of a SparseHalo with each transport (neighbourhood
// collective, persistent point-to-point), on the 5-point Laplacian's graph of a k x k grid in
// block rows, natural or randomly renumbered (the shared `permute=SEED` of the generators). Prints
// one JSON line: per transport, the set-up time and the time per update (the slowest process's mean
// over --reps updates, best of --trials trials, the transports alternating), and the largest
// per-process neighbours, values sent and bytes per update.
//   mpiexec -n 4 hit-bench-sparse_halo [--n 1024] [--permute SEED] [--reps 1000] [--trials 5]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/layout.hpp"
#include "hit/program.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/sparse_halo.hpp"

namespace {

using hit::index_t;
using Json = nlohmann::json;

struct Options {
  index_t n = 1024;
  std::uint64_t permute = 0;
  int reps = 1000;
  int trials = 5;
};

// The generators' renumbering (docs/sparse.md, "Generators").
using hit::permutation;

// This process's block of rows of the (renumbered) grid Laplacian, and the owner of every row.
hit::CsrPattern my_rows(index_t k, std::uint64_t seed, int procs, int me,
                        std::vector<std::int32_t>& owners) {
  const index_t n = k * k;
  std::vector<index_t> pi;
  std::vector<index_t> inverse;
  if (seed != 0) {
    pi = permutation(n, seed);
    inverse.resize(pi.size());
    for (index_t u = 0; u < n; ++u) inverse[static_cast<std::size_t>(pi[u])] = u;
  }
  auto to_new = [&](index_t u) { return seed != 0 ? pi[static_cast<std::size_t>(u)] : u; };
  owners.assign(static_cast<std::size_t>(n), 0);
  for (int p = 0; p < procs; ++p) {
    const auto [first, last] = hit::block_range(n, procs, p);
    std::fill(owners.begin() + first, owners.begin() + last, p);
  }
  const auto [first, last] = hit::block_range(n, procs, me);
  hit::CsrPattern rows;
  rows.global_rows = rows.global_cols = n;
  std::vector<index_t> cols;
  for (index_t i = first; i < last; ++i) {
    const index_t u = seed != 0 ? inverse[static_cast<std::size_t>(i)] : i;
    const index_t x = u % k;
    const index_t y = u / k;
    cols = {to_new(u)};
    if (x > 0) cols.push_back(to_new(u - 1));
    if (x + 1 < k) cols.push_back(to_new(u + 1));
    if (y > 0) cols.push_back(to_new(u - k));
    if (y + 1 < k) cols.push_back(to_new(u + k));
    std::sort(cols.begin(), cols.end());
    rows.names.push_back(i);
    rows.cols.insert(rows.cols.end(), cols.begin(), cols.end());
    rows.row_ptr.push_back(static_cast<index_t>(rows.cols.size()));
  }
  return rows;
}

double max_over(double v, MPI_Comm comm) {
  hit::allreduce_in_place(&v, 1, MPI_DOUBLE, MPI_MAX, comm);
  return v;
}

// The slowest process's mean time per update over `reps` updates.
double time_updates(hit::SparseHalo& halo, std::vector<double>& x, int reps, MPI_Comm comm) {
  for (int i = 0; i < 20; ++i) halo.update(x);
  hit::barrier(comm);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < reps; ++i) halo.update(x);
  return max_over((MPI_Wtime() - t0) / reps, comm);
}

int body(hit::Environment& env, int argc, char** argv) {
  CLI::App cli("hit-bench-sparse_halo: time per sparse halo update, by transport (JSON line)");
  Options o;
  cli.add_option("--n", o.n, "grid of n x n points")->capture_default_str();
  cli.add_option("--permute", o.permute, "renumber the unknowns with this seed (0: natural)")
      ->capture_default_str();
  cli.add_option("--reps", o.reps, "updates per trial")->capture_default_str();
  cli.add_option("--trials", o.trials, "trials per transport (best kept)")->capture_default_str();
  if (!hit::cli::parse(cli, argc, argv, env.rank(), "hit-bench-sparse_halo")) return hit::exit_ok;
  std::vector<std::int32_t> owners;
  const hit::CsrShape shape(my_rows(o.n, o.permute, env.size(), env.rank(), owners));
  const hit::SparseTransport kinds[] = {hit::SparseTransport::neighbour,
                                        hit::SparseTransport::persistent};
  std::vector<hit::SparseHalo> halos;
  std::vector<double> setup;
  for (const auto t : kinds) {
    hit::barrier(env.comm());
    const double t0 = MPI_Wtime();
    halos.emplace_back(shape, owners, env.comm(), hit::SparseHaloOptions{.transport = t});
    setup.push_back(max_over(MPI_Wtime() - t0, env.comm()));
  }
  std::vector<double> x(static_cast<std::size_t>(shape.vertices()), 1.0);
  std::vector<double> best(halos.size(), 1e30);
  for (int trial = 0; trial < o.trials; ++trial) {
    for (std::size_t h = 0; h < halos.size(); ++h) {
      best[h] = std::min(best[h], time_updates(halos[h], x, o.reps, env.comm()));
    }
  }
  const hit::SparseHalo& halo = halos.front();
  const double peers = max_over(halo.neighbours(), env.comm());
  const double sent = max_over(static_cast<double>(halo.values_sent()), env.comm());
  const double ghosts = max_over(static_cast<double>(shape.ghosts()), env.comm());
  Json per = Json::object();
  for (std::size_t h = 0; h < halos.size(); ++h) {
    per[std::string(hit::to_string(kinds[h]))] = {{"setup_s", setup[h]},
                                                  {"update_us", best[h] * 1e6}};
  }
  const Json out = {{"app", "sparse_halo"},
                    {"n", o.n},
                    {"permute", o.permute},
                    {"procs", env.size()},
                    {"reps", o.reps},
                    {"max_neighbours", peers},
                    {"max_values_sent", sent},
                    {"max_ghosts", ghosts},
                    {"max_bytes_per_update", sent * sizeof(double)},
                    {"transports", per}};
  if (env.rank() == 0) std::printf("%s\n", out.dump().c_str());
  return hit::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  return hit::run_program(argc, argv, "hit-bench-sparse_halo", body);
}
