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
  std::vector<std::string> device_keys;  // per process (Machine::device_key)
  // Per process, seconds: the prediction without the turns taken on a shared device
  // (Machine::sharing_factor), since a result's compute_s leaves out the wait for the device.
  std::vector<double> predicted_compute;
  std::vector<double> measured_compute;  // the result's compute_s
  std::vector<double> predicted_comm;    // per process, seconds
  std::vector<double> measured_comm;     // the result's comm_s
};

// Per device key, the median over its processes of measured / predicted compute; for other
// devices the median over every process; for communication the median over the runs of
// measured / predicted communication of the run's busiest process (the most measured compute
// among those with predicted communication): it waits least for the others, so its
// communication time is the messages' own. Processes without compute and runs without predicted
// communication give no ratio. Error(invalid_argument) for no sample or sizes that disagree.
Calibration fit_calibration(std::span<const RunSample> runs);

}  // namespace hit::advisor
