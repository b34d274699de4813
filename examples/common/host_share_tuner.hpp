#pragma once
// Song, Tomov and Dongarra's tuning of heteroBlockCyclic's host share B_h, for any tiled
// factorisation (hit-cholesky, hit-qr --tune): factorise a small problem from the B_h the layout
// computed, compare the host's and the accelerators' busy times (the slowest process of each
// kind; medians of three factorisations after one that warms up), step B_h by the granularity g
// towards the slower side's relief, and keep the B_h whose times differ least; stop when the
// slower side changes, at 0 or B, or after eight trials. Header-only: examples/common is not a
// program.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "app.hpp"
#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/layout.hpp"

namespace hit::app {

// One trial: the host share tried and the busy times it gave.
struct TuneStep {
  index_t n = 0;  // order of the problem factorised
  index_t bh = 0;
  double host_s = 0;    // the slowest host process's compute time
  double device_s = 0;  // the slowest accelerator process's
};

// One factorisation of the small problem: this process's seconds of tile kernels.
using TuneRun = std::function<double()>;
// Sets the small problem up on a layout of it (n × n); the run it returns may be called again.
using TuneSetup = std::function<TuneRun(const Layout&)>;

// One factorisation's busy times vary by 5-10 % when processes share cores, as much as a step of
// B_h changes them: each trial is the median of this many, after one that warms up.
constexpr int tune_repetitions = 3;

// The trials on `lay` (heteroBlockCyclic, else Error(invalid_argument) naming `flag`), the small
// problem of order `tune_n` (0: 3·B·accelerator processes). Collective.
inline std::vector<TuneStep> tune_host_share(Environment& env, const Layout& lay, index_t tune_n,
                                             const TuneSetup& setup) {
  const Spec& spec = lay.spec_value();
  if (spec.name() != "heteroBlockCyclic") {
    throw Error(
        ErrorKind::invalid_argument,
        "--tune tunes the host share of heteroBlockCyclic; the layout is '" + lay.spec() + "'");
  }
  const index_t big = spec.get_int("B", 0);
  const index_t thin = spec.get_int("b", 0);
  const index_t step = spec.get_int("g", thin);
  const bool host = device(env).kind() == DeviceKind::cpu;
  const int accelerators = allreduce(host ? 0 : 1, ReduceOp::sum);
  const index_t n =
      tune_n > 0 ? tune_n : std::max<index_t>(big, 3 * big * std::max(accelerators, 1));
  std::vector<TuneStep> steps;
  index_t bh = spec.get_int("bh", big / 2);
  int previous_sign = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const Layout l = layout(spec.with("bh", bh), lay.topology(), Shape::extents({n, n}));
    const TuneRun run = setup(l);
    std::vector<double> host_s, device_s;
    for (int rep = 0; rep < 1 + tune_repetitions; ++rep) {
      barrier(env.comm());
      const double seconds = run();
      double busy[2] = {host ? seconds : 0.0, host ? 0.0 : seconds};
      allreduce(std::span<double>(busy), ReduceOp::max);
      if (rep == 0) continue;
      host_s.push_back(busy[0]);
      device_s.push_back(busy[1]);
    }
    const double busy[2] = {median(host_s), median(device_s)};
    steps.push_back({n, bh, busy[0], busy[1]});
    const int sign = busy[0] > busy[1] ? 1 : -1;  // 1: the host is the slower side
    if (previous_sign != 0 && sign != previous_sign) break;
    previous_sign = sign;
    const index_t next = bh - sign * step;
    if (next < 0 || next > big) break;
    bh = next;
  }
  return steps;
}

// The host share whose busy times differed least.
inline index_t best_host_share(const std::vector<TuneStep>& steps) {
  const auto best =
      std::min_element(steps.begin(), steps.end(), [](const TuneStep& a, const TuneStep& b) {
        return std::abs(a.host_s - a.device_s) < std::abs(b.host_s - b.device_s);
      });
  return best->bh;
}

// The report's lines and the JSON `tuning` (and `tune_n`) of the trials.
inline void describe_host_share(const std::vector<TuneStep>& trials, nlohmann::json& fields,
                                std::vector<std::string>& lines) {
  nlohmann::json steps = nlohmann::json::array();
  for (const TuneStep& s : trials) {
    steps.push_back({{"bh", s.bh}, {"host_s", s.host_s}, {"device_s", s.device_s}});
    lines.push_back(fmt::format("tuning: B_h {}: host busy {:.4f} s, accelerators {:.4f} s", s.bh,
                                s.host_s, s.device_s));
  }
  fields["tuning"] = steps;
  if (!trials.empty()) fields["tune_n"] = trials.front().n;
}

}  // namespace hit::app
