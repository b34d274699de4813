#pragma once
// The advisor learning from runs (docs/advisor.md): a program's --json result, re-predicted on
// the layout it ran, gives measured over predicted compute per device and measured over
// predicted communication; Machine::set_calibration applies them to later predictions.

#include <span>
#include <string>
#include <vector>

#include "hit/advisor/machine.hpp"

namespace hit::advisor {

// One measured run beside its prediction.
struct RunSample {
  std::vector<std::string> device_keys;   // per process (Machine::device_key)
  std::vector<double> predicted_compute;  // per process, seconds
  std::vector<double> measured_compute;   // per process, seconds (the result's compute_s)
  double measured_s = 0;                  // the result's time_s
  double predicted_comm_s = 0;            // the prediction's communication on the critical path
};

// Per device key, the median over its processes of measured / predicted compute; for other
// devices the median over every process; for communication the median over the runs of
// (measured makespan − the busiest process's measured compute) / predicted communication: what
// the busiest process did not spend computing it spent communicating, as it waits the least.
// Processes without compute and runs without predicted communication give no ratio.
// Error(invalid_argument) for no sample or sizes that disagree.
Calibration fit_calibration(std::span<const RunSample> runs);

}  // namespace hit::advisor
