#pragma once
// hit-packages' clusterCL workloads (Raca and Mehofer, clusterCL): ten data-parallel applications
// beside gemm, each a sequence of one or more kernels over work packages. What each takes and
// gives (arrays by name, their roles and shapes, scalar parameters) is a value, printed by
// --describe; the run dispatches every kernel as work packages (partitioned inputs with halo
// rows where a kernel reads neighbours, replicated inputs, partitioned outputs, outputs reduced
// over the packages), merges between kernels where the next reads a whole array, and checks
// against a serial computation.

#include <map>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/shape.hpp"
#include "packages.hpp"

namespace hit::packages {

// One array of a workload.
struct WorkloadArray {
  std::string name;
  bool output = false;
  Shape shape;
  bool by_rows = false;  // laid out by rows over the processes (else whole on every process)
};

// What a workload computes for the sizes and parameters given.
struct WorkloadSpec {
  std::string name;
  std::vector<WorkloadArray> arrays;
  std::map<std::string, double> params;  // every parameter it takes, with the value in force
  double flops = 0;                      // of the whole problem, for the throughput
};

// The clusterCL workloads hit-packages computes beside mandelbrot and gemm.
const std::vector<std::string>& clustercl_workloads();
bool is_clustercl(const std::string& workload);
// Error(invalid_argument) for sizes or parameters the workload does not take.
WorkloadSpec workload_spec(const Options& o);
// --describe: one JSON line.
std::string describe_workload(const WorkloadSpec& spec, const std::string& type);
int run_clustercl(Environment& env, const Options& o);
// NAME=VALUE items of `flag`, by name; Error(invalid_argument) for an item without a name or '=',
// or a name given twice.
std::map<std::string, std::string> named_values(const std::string& flag,
                                                const std::vector<std::string>& items);

}  // namespace hit::packages
