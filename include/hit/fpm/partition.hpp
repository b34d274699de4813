#pragma once
// Model-based partitioners (FuPerMod §4.3, Clarke et al. §1.3; docs/fpm.md): split n
// computation units over devices so that the largest predicted time (the makespan) is small.
//
// Every partitioner returns integers that sum exactly to n, never gives a device more than its
// capacity, reports each part's predicted time from the device's own model, and is deterministic
// (same inputs, same answer on every rank; ties go to the lower device index). Errors:
// Error(invalid_argument) for n < 0, no models, or a total capacity below n; Error(model) for a
// device whose model has no points (only `even` accepts those).
//
// The FPM partitioners (geometric, numerical, exact) balance the running-maximum envelope of each
// model, which is the model itself when times never decrease, and end with an exact integer
// completion, so for monotone models they all reach the optimal integer makespan.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hit/core/registry.hpp"
#include "hit/core/spec.hpp"
#include "hit/fpm/distribution.hpp"
#include "hit/fpm/model.hpp"

namespace hit {
class Environment;
}

namespace hit::fpm {

// Homogeneous baseline: equal shares, the first n mod p devices one more (as the `blocks` layout);
// devices whose capacity is smaller keep their capacity and the rest share the remainder.
Distribution partition_even(std::span<const Model> models, std::int64_t n);

enum class Rounding {
  greedy,            // R1: exact greedy completion, the optimal integers for the constant speeds
  largest_remainder  // R2: classic Hamilton rounding of the proportional shares (not optimal)
};
// Proportional (CPM): constant speeds s_i, taken from constant models as they are and from other
// models at the probe size min(max(1, n/p), capacity) ("CPM from a homogeneous kernel"); shares
// proportional to speed with capacities filled first (water-filling).
Distribution partition_proportional(std::span<const Model> models, std::int64_t n,
                                    Rounding rounding = Rounding::greedy);

enum class Bisection {
  log,    // T_B = sqrt(T_U·T_L): scale-free (default)
  angle,  // halve the angle between the lines U and L, as drawn in Clarke et al.'s Fig. 1.2
  linear  // T_B = (T_U + T_L) / 2
};
// Geometric (Clarke et al. §1.3): bisection of the region between two lines through the origin of
// the speed graphs, on coarsened piecewise models (Model::coarsened), then exact integer
// completion.
Distribution partition_geometric(std::span<const Model> models, std::int64_t n,
                                 Bisection bisection = Bisection::log, int max_iterations = 100);

// Numerical (docs/fpm.md): safeguarded false position (Illinois) on the common finishing
// time T of G(T) = Σ X_i(T) − n, then exact integer completion. Works on smooth (Akima) and any
// other models without the shape restriction of the geometric algorithm.
Distribution partition_numerical(std::span<const Model> models, std::int64_t n,
                                 double tolerance = 1e-12, int max_iterations = 200);

// Exact integer solver (docs/fpm.md): the optimal makespan of the envelope models by a
// search over the candidate times t_i(d); the canonical distribution gives ties to lower indices.
// The fallback partitioner and the test oracle.
Distribution partition_exact(std::span<const Model> models, std::int64_t n);

// Dynamic programming over the raw (not enveloped) times, exact also for non-monotone models;
// O(p·n²), so limited to p·n² <= 2e8 (an Error(invalid_argument) beyond).
Distribution partition_dp(std::span<const Model> models, std::int64_t n);

// The distribution `d` evaluated on `models`: predicted times and makespan, with checks that the
// sizes fit (count, sum, capacities). For comparing partitioners and for users' own distributions.
Distribution evaluate(std::span<const Model> models, std::span<const std::int64_t> d,
                      std::string algorithm = "given");

// ---- selection by name -------------------------------------------------------------------------

// A named partitioner for the registry (`name[:key=value,…]` specs).
class Partitioner {
 public:
  using Function =
      std::function<Distribution(std::span<const Model>, std::int64_t n, const Spec& spec)>;
  Partitioner(std::string name, std::string description, std::vector<ParamInfo> params, Function fn)
      : name_(std::move(name)),
        description_(std::move(description)),
        params_(std::move(params)),
        fn_(std::move(fn)) {}

  const std::string& name() const noexcept { return name_; }
  const std::string& description() const noexcept { return description_; }
  const std::vector<ParamInfo>& params() const noexcept { return params_; }
  Distribution operator()(std::span<const Model> models, std::int64_t n, const Spec& spec) const;

 private:
  std::string name_;
  std::string description_;
  std::vector<ParamInfo> params_;
  Function fn_;
};

// The partitioners of a run: the built-ins (even, proportional, geometric, numerical, exact, dp)
// plus any a program or plug-in adds. Owned by the Environment (Environment::extension).
class PartitionerRegistry : public Registry<Partitioner> {
 public:
  PartitionerRegistry();
  explicit PartitionerRegistry(Environment&) : PartitionerRegistry() {}
};

// The built-in names, in the order they are documented.
std::vector<std::string> builtin_partitioners();

// Partitions with the partitioner named by `algorithm` (e.g. "geometric", "proportional:rounding=
// largest_remainder"), from the current Environment's registry when one exists, else the
// built-ins. Unknown names or keys are an Error(plugin) listing what exists.
Distribution partition(const std::string& algorithm, std::span<const Model> models, std::int64_t n);

// Checks `algorithm` as partition() would take it, before any model is loaded or measured: an
// unknown name or key, or a value the partitioner does not allow, is the Error(plugin) that
// partition() would throw when the first partition is computed (it runs the partitioner once on
// one device of constant speed).
void check_partitioner(const std::string& algorithm);

}  // namespace hit::fpm
