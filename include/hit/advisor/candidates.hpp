#pragma once
// The layout advisor (docs/advisor.md): every registered layout plug-in that applies to an
// application, with sensible parameters, on every registered topology that fits, predicted and
// ranked. A candidate a plug-in or the application refuses is kept with the reason, so that a
// plug-in missing from the ranking says why.

#include <string>
#include <vector>

#include "hit/advisor/machine.hpp"
#include "hit/advisor/prediction.hpp"
#include "hit/core/environment.hpp"
#include "hit/sparse/csr_rows.hpp"

namespace hit::advisor {

// One run the advisor considers: a layout spec on a topology spec.
struct CandidateSpec {
  std::string layout;
  std::string topology;
  friend bool operator==(const CandidateSpec&, const CandidateSpec&) = default;
};

struct Candidate {
  CandidateSpec spec;
  Prediction prediction;
};

struct Rejection {
  CandidateSpec spec;
  std::string reason;
};

// Predicted makespans within this fraction of each other are a tie (see Advice).
inline constexpr double tie_tolerance = 0.02;

// Ranked candidates and the rejected ones. The ranking: those that fit first, then by predicted
// makespan, where makespans within tie_tolerance of the first of their run rank by their total
// cost (every process's compute and communication added up), smallest first.
struct Advice {
  std::vector<Candidate> candidates;
  std::vector<Rejection> rejected;
};

// The problem: the application, its array (dense apps: C's shape n×k for the products, the grid
// for Jacobi, the matrix for Cholesky), the inner dimension m of the products (0: n) and the run.
struct DenseProblem {
  App app = App::cannon;
  Shape shape;
  index_t inner = 0;
  RunShape run;
};

// What the plug-ins' parameters are derived from besides the machine: the model files behind
// Machine::models() (one per process, empty: none), for the `fpm` and `columns2d` specs.
struct CandidateOptions {
  std::vector<std::string> model_files;
  // The bytes an even share of the problem puts on a device: the speeds behind the weights are
  // taken at that size (an emulated device's slowdown profile, a model's curve).
  double share_bytes = 0;
};

// The candidates of a dense application: for every topology plug-in of `env` (default
// parameters) that fits the application (Cannon: square grids) and every layout plug-in, the
// specs it offers for that grid (LayoutPlugin::candidates; docs/advisor.md lists the built-in
// plug-ins' sweeps). Layouts equal to an earlier candidate's are dropped.
std::vector<CandidateSpec> dense_candidates(Environment& env, App app, const Machine& machine,
                                            const CandidateOptions& options);
// The candidates of a sparse application (CG): every sparse layout plug-in of `env` with the
// specs it offers (SparseLayoutPlugin::candidates: weights from the machine where it takes them),
// on the `array` topology.
std::vector<CandidateSpec> sparse_candidates(Environment& env, const Machine& machine,
                                             const CandidateOptions& options);

// Builds and predicts each candidate; a candidate whose layout or prediction throws Error is
// rejected with the message. Not collective.
Advice advise_dense(const DenseProblem& problem, const Machine& machine,
                    const std::vector<CandidateSpec>& specs);
// The same for CG over the matrix whose rows `mine` this process holds (any distribution over
// the run's processes, as sparse_layout takes them): collective, the same result everywhere.
Advice advise_sparse(const CsrPattern& mine, const Machine& machine, const RunShape& run,
                     const std::vector<CandidateSpec>& specs);

// Predicts one dense candidate (the layouts built as the application builds them).
Prediction predict_dense(const DenseProblem& problem, const Machine& machine,
                         const CandidateSpec& spec);

// A text equal for equal block lists: two specs that give every process the same blocks are one
// candidate, whatever topology they were laid on (the applications' messages follow the blocks).
std::string blocks_signature(const Layout& layout);

// Relative speeds of the processes for the weights of the balancing layouts: 1/time of an even
// share of `flops` of `kernel` on a problem of `share_bytes` on each, scaled so the largest is 1.
std::vector<double> relative_speeds(const Machine& machine, Kernel kernel, double flops,
                                    double share_bytes = 0);

}  // namespace hit::advisor
