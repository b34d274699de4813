#pragma once
// hit-layout --advise: rank the layouts of an application before running it (docs/advisor.md).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "hit/core/environment.hpp"

namespace hit::tools {

struct AdviseOptions {
  bool advise = false;
  std::string app;
  std::string models;   // one file per process, comma-separated, or one name with {rank}
  std::string network;  // a network model file (hit-fpm network)
  int nodes = 0;        // ranks per node (0: one node)
  int host_cores = 0;   // host cores per node shared by the host processes (0: enough)
  int iters = -1;       // jacobi and cg; -1: the --calibrate results' count, else 100
  long long inner = 0;  // cannon and summa: m (0: n)
  long long panel = 256;
  int top = 0;               // rows of the table (0: all)
  bool per_process = false;  // --json: each candidate's processes
  std::vector<std::string> calibrate;
};

// The advisor's options, added to hit-layout's.
void add_advise_options(CLI::App& app, AdviseOptions& o);

// What hit-layout's own options give the advisor.
struct AdviseInput {
  std::string shape;     // dense apps
  std::string matrix;    // cg: a Matrix Market file
  std::string generate;  // cg: a generator spec
  std::string devices;   // --devices (else HIT_DEVICES, else cpu for every process)
  std::string type;
  std::string svg;
  bool json = false;
};

// Ranks the candidates and prints them on rank 0 (a table, or --json); collective.
int advise(Environment& env, const AdviseOptions& o, const AdviseInput& in, int nprocs);

}  // namespace hit::tools
