#pragma once
// The advisor learning from runs (docs/advisor.md): a program's --json result, re-predicted on
// the layout it ran, gives measured over predicted compute per device, then the communication
// factor that accounts for the makespan beyond the compute; Machine::set_calibration applies
// them to later predictions.

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

// The communication factor of a run: its measured makespan beyond the prediction without
// communication (`makespan_without_comm`, the compute factors applied), over the communication
// the prediction puts on the critical path at factor 1 (`comm_at_one`, Prediction::comm_s); at
// least 1e-3 (a run faster than its compute says nothing of its messages). The residual is
// charged to the messages as if they did not overlap the compute: a run whose compute hides its
// messages gives them only what it measured beyond its compute, not the whole makespan that an
// overlapped term would need to reach.
double fit_comm_factor(double makespan_without_comm, double comm_at_one, double measured_s);

}  // namespace hit::advisor
