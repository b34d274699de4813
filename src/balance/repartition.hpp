#pragma once
// What dynamic partitioning and dynamic load balancing share: repartitioning over partial models
// (devices without a model get a probe share; gaps across a cliff get probed), merging a new point
// into a model, and the step that follows the speeds of one measurement.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hit/fpm/distribution.hpp"
#include "hit/fpm/model.hpp"

namespace hit::balance::detail {

using Sizes = std::vector<std::int64_t>;
using Repartition = std::function<fpm::Distribution(const std::vector<fpm::Model>&)>;

// `devices` empty models of `kind`; Error(invalid_argument) for fewer than one device.
std::vector<fpm::Model> empty_models(int devices, fpm::ModelKind kind);

// Partitions among the devices that have models; a device that has none yet (it never had work)
// gets a probe share of one unit, taken from the largest share, so that it gets measured. With
// `explore`, shares inside a gap across a cliff are probed (see repartition.cpp).
fpm::Distribution repartition_local(const std::string& algorithm, std::int64_t n,
                                    const std::vector<fpm::Model>& models, bool explore = false);

// Adds a measured point to a partial model, merging it with a point the model holds within
// `within` × d (see repartition.cpp for why).
void add_measurement(fpm::Model& model, const fpm::Point& point, double within);

// Shares proportional to the speeds measured in this step, or an empty distribution when that is
// not possible or the models predict it worse than `measured_makespan` by more than `tolerance`.
fpm::Distribution proportional_step(std::span<const fpm::Model> models,
                                    std::span<const fpm::Point> measured, const Sizes& current,
                                    std::int64_t n, const std::string& algorithm,
                                    double measured_makespan, double tolerance);

// Error(invalid_argument) naming `what` when the context's device count differs from the given.
void check_devices(std::size_t models, std::size_t devices, std::string_view what);

}  // namespace hit::balance::detail
