#pragma once
// Where the next work package goes (docs/packages.md, "Placement by expected finish time"): pure
// functions of what each device has measured and holds, with no MPI and no devices, so that the
// cases that decide the tail of a run (equal speeds, a device a thousand times slower, a device
// with no measurement yet, the last package) are unit-tested. Internal to src/packages/.
//
//   PackageProfile      a device's seconds per package: a running median of its packages
//   packages_to_take    how many of the packages left a device takes now: those it would finish
//                       before any other device could (earliest finish time, as HEFT/dmda)
//   split_by_speed      the home queues' sizes, proportional to the speeds known at the start
//   prefetch_depth      packages held ahead: enough that the next one's rows arrive in time
//   devices_taking_part the devices that can finish a package before the others finish all

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hit/shape.hpp"

namespace hit::detail {

// Seconds per package measured on one device. One package alone can mislead (the first one pays
// one-off costs, another shares its core with a burst of other work): with one sample the
// estimate is that sample, with two the quicker, from three on the median of the last `window`,
// so one slow package never moves the estimate.
class PackageProfile {
 public:
  static constexpr std::size_t window = 9;

  // Ignores what is not a positive finite number of seconds.
  void observe(double seconds);
  // Starts from an estimate made elsewhere (the size tuner, an earlier run): counts as one sample.
  void prime(double seconds);
  bool known() const noexcept { return !recent_.empty(); }
  std::uint64_t samples() const noexcept { return samples_; }
  // The estimate; 0 when nothing is known.
  double seconds() const;
  // A cautious estimate: the second longest of the last `window` (the longest with fewer than
  // three samples). Package costs differ (Mandelbrot rows through the set run every iteration,
  // others escape at once), and a slow device that takes an expensive package near the end
  // makes the run's tail; it plans with this one, still robust to one stalled package.
  double cautious_seconds() const;

 private:
  std::vector<double> recent_;  // the last `window` samples, oldest first
  std::uint64_t samples_ = 0;
};

// What one device looks like to the others when a package is placed.
struct DeviceOutlook {
  double per_package_s = 0;  // its profile; 0: not measured yet
  double cautious_s = 0;     // PackageProfile::cautious_seconds (0: as per_package_s)
  double free_at_s = 0;      // when it expects to finish what it holds (the round's clock)
  std::int64_t held = 0;     // packages it holds, the one computing included
  bool working = true;       // false: its device failed (it takes nothing)
};

// How many of the `remaining` packages nobody holds yet device `me` should claim now, at time
// `now_s`: the packages it would finish before any other device could, counting every device's
// backlog (its free_at_s; a device past its free_at_s that still holds packages is overdue and is
// expected to need `held` more of its packages from now). The packages left are placed one by
// one on the device that would finish each first; `me` claims the ones that land on it (ties
// included: claims are atomic, so two devices asking for one package is harmless, nobody asking
// would not be). A device with no profile yet beside measured ones claims one package when it
// holds none (to be measured) and is not counted as capacity by the others; when no device is
// measured yet, all count as equally fast. A device slower than another measured one counts its
// own packages at its cautious time (the others' and the end of the run at their typical ones):
// it takes a package only if it would finish it first even if it were one of the expensive ones.
// The fastest device, when it holds nothing, always takes one, so some device always does.
// 0: let the others take them (a slow device beside a fast one near the end of a run).
[[nodiscard]] index_t packages_to_take(std::span<const DeviceOutlook> devices, std::size_t me,
                                       index_t remaining, double now_s);

// Which devices take part in a round of `count` packages, given each device's slowness (its
// time on one package over the quickest device's; 0 or less: its device failed): a device takes
// part unless even one package of its own would end after the others, free now, had computed all
// `count` packages, i.e. its speed 1/slowness is below the others' summed speed over `count`.
// Such a device could only lengthen the run (placement by expected finish time would never give
// it a package), and leaving it out spares the others its survey answers. The quickest working
// device always takes part; failed ones never do.
[[nodiscard]] std::vector<bool> devices_taking_part(std::span<const double> slowness,
                                                    index_t count);

// `count` packages over devices of relative `speeds` (packages per second, or any common unit):
// proportional shares, rounded by largest remainder so that they sum to `count`. A speed of 0
// (a failed device) gets none; when no speed is positive, the shares are equal over every device.
[[nodiscard]] std::vector<index_t> split_by_speed(index_t count, std::span<const double> speeds);

// Packages held ahead of the one computing on a device whose package's rows take `fetch_s` to
// arrive (from other ranks and onto the device) and `compute_s` to compute: enough that a fetch
// started when a package is claimed ends before the packages ahead of it are computed, at least 1,
// at most `most`. Unmeasured times (0): `most`.
[[nodiscard]] int prefetch_depth(double fetch_s, double compute_s, int most);

}  // namespace hit::detail
