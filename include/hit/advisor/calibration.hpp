#pragma once
// The advisor learning from runs (docs/advisor.md): a program's --json result, re-predicted on
// the layout it ran, gives measured over predicted compute per device, then the time each
// message costs beyond the network model; Machine::set_calibration applies them to later
// predictions.

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
  // Per process, seconds: the launches' overhead the prediction adds to its compute (empty: none).
  std::vector<double> predicted_launch;
  std::vector<double> measured_compute;  // the result's compute_s
};

// The compute factors: per device key, the median over its processes of measured / predicted
// compute, the predicted launches' overhead taken out of the measured first (leaving at least
// a tenth of it); for other devices the median over every process. Processes without compute
// give no ratio. Where a key's samples come from shares far apart (the launches' part of the
// prediction differs at least twofold relative to the kernels'), the kernels' factor f and the
// launches' g are fitted together instead: measured ≈ f · kernels + g · launches, least squares
// of the relative residuals, kept when both are positive. The message overhead is left at 0: fit
// it with fit_message_overhead once the compute factors apply. Error(invalid_argument) for no
// sample or sizes that disagree.
Calibration fit_calibration(std::span<const RunSample> runs);

// The calibration that applies `correction` on top of `applied`: a correction fitted from
// predictions made with `applied` (per device key, its compute and launch factors multiply,
// a key `applied` lacks taking its compute_other, and compute_other multiplies). The message
// overhead is the correction's. The advisor fits its factors again with the factors found so far
// applied until they settle, since what contention makes of a kernel depends on its length (a
// kernel shorter than the scheduler's slice runs to its end once it has a core).
Calibration refined(const Calibration& applied, const Calibration& correction);

// Whether `correction` changes no factor by more than `tolerance` (relative).
bool settled(const Calibration& correction, double tolerance);

// One process of a measured run beside its prediction (the compute factors applied, no message
// overhead), seconds; `messages` is its communication with one second added to every message,
// less its communication without.
struct ProcessMessages {
  double measured_compute = 0;
  double measured_comm = 0;  // the result's comm_s: its messages and its waits for other processes
  double predicted_compute = 0;
  double predicted_comm = 0;
  double messages = 0;
};

// One measured run for the message fit, predicted as above: the makespans, the messages on the
// predicted critical path (as for a process), and each process (empty: not known).
struct MessageSample {
  double predicted_s = 0;
  double messages = 0;
  double measured_s = 0;
  std::vector<ProcessMessages> procs;
};

// The time each message of a run costs beyond the network's latency and bandwidth: the run's
// measured makespan beyond its prediction, less what its slowest process computed beyond the
// slowest predicted one, over the critical path's messages; and no more than the measured
// communication beyond the predicted of any process, over that process's messages. 0 when the
// run was not slower than predicted. The overhead is per message, not per byte: what a model
// of the network leaves out is mostly what each message waits for (a progress engine, a
// rendezvous), which a longer message does not lengthen. Charging the residual to the critical
// path's messages without their overlap keeps a compute-bound run from stretching its messages
// to the whole makespan.
// Why the two corrections: the compute factors are medians over a device's processes, so a
// process that computed slower than its device's median (a core shared with the system, a
// farther memory node) leaves its extra compute in the residual; and a process that waited
// least for the others bounds what a message costs, where the residual of a run whose steps are
// long also holds each step's wait for its slowest process of the moment (on an H200 beside
// three cores, 10 ms steps made 1.4 ms a message of it, where the run's busiest host process
// spent 0.3 ms a message in communication).
double fit_message_overhead(const MessageSample& run);

}  // namespace hit::advisor
