#pragma once
// The advisor learning from runs (docs/advisor.md): a program's --json result, re-predicted on
// the layout it ran, gives measured over predicted compute per device, then the communication
// factor that makes the predicted makespan the measured one; Machine::set_calibration applies
// them to later predictions.

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hit/advisor/machine.hpp"

namespace hit::advisor {

// One measured run beside its prediction.
struct RunSample {
  std::vector<std::string> device_keys;  // per process (Machine::device_key)
  // Per process, seconds: the prediction without the turns taken on a shared device
  // (Machine::sharing_factor), since a result's compute_s leaves out the wait for the device.
  std::vector<double> predicted_compute;
  std::vector<double> measured_compute;  // the result's compute_s
};

// The compute factors: per device key, the median over its processes of measured / predicted
// compute; for other devices the median over every process. Processes without compute give no
// ratio. The communication factor is left at 1: fit it with fit_comm_factor once the compute
// factors apply. Error(invalid_argument) for no sample or sizes that disagree.
Calibration fit_calibration(std::span<const RunSample> runs);

// The communication factor f at which a run's predicted makespan, `makespan(f)` (the compute
// factors applied), equals its measured one: what the run spent beyond its compute, however the
// application overlaps it, is its messages' (their waits included). Bisection over f in
// [1e-3, 1e4] (the makespan grows with f); a bound when the measured makespan is outside the
// range's predictions.
double fit_comm_factor(const std::function<double(double)>& makespan, double measured_s);

}  // namespace hit::advisor
