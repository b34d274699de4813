#pragma once
// hit-fpm's subcommands (main.cpp declares their options): build (build.cpp), partition, show and
// plot (models.cpp), hierarchical (hierarchical.cpp), network (network.cpp).

#include <cstdint>
#include <string>
#include <vector>

namespace hit {
class Environment;
}

namespace hit_fpm {

struct BuildOptions {
  std::string kernel = "gemm";
  int block = 64;
  std::int64_t columns = 4096;
  bool resident = false;
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

struct NetworkCli {
  std::string out;
  std::vector<std::int64_t> sizes;  // bytes; empty: NetworkOptions' defaults
  int reps = 20;
  int warmup = 3;
  int max_pairs = 16;
  int nodes = -1;
  bool json = false;
  bool quiet = false;
};

int run_build(hit::Environment& env, const BuildOptions& o);
int run_partition(hit::Environment& env, const ModelOptions& o);
int run_show(hit::Environment& env, const ModelOptions& o);
int run_plot(hit::Environment& env, const ModelOptions& o);
int run_hierarchical(hit::Environment& env, const HierarchicalCli& c);
int run_network(hit::Environment& env, const NetworkCli& c);

}  // namespace hit_fpm
