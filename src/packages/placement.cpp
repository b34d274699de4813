// Where the next work package goes (placement.hpp).

#include "packages/placement.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hit::detail {

void PackageProfile::observe(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  if (recent_.size() == window) recent_.erase(recent_.begin());
  recent_.push_back(seconds);
  ++samples_;
}

void PackageProfile::prime(double seconds) {
  observe(seconds);
}

double PackageProfile::seconds() const {
  if (recent_.empty()) return 0;
  if (recent_.size() <= 2) return *std::min_element(recent_.begin(), recent_.end());
  std::vector<double> sorted = recent_;
  const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), mid, sorted.end());
  return *mid;
}

double PackageProfile::cautious_seconds() const {
  if (recent_.empty()) return 0;
  std::vector<double> sorted = recent_;
  std::sort(sorted.begin(), sorted.end());
  return sorted.size() < 3 ? sorted.back() : sorted[sorted.size() - 2];
}

namespace {

// When device `d` can start another package: after what it holds; a device past its expected
// finish that still holds packages is overdue (a stalled package): it is taken to need `held` more
// of its packages from now, not to be free at once.
double available_at(const DeviceOutlook& d, double now_s) {
  if (d.free_at_s >= now_s) return d.free_at_s;
  if (d.held > 0) return now_s + static_cast<double>(d.held) * d.per_package_s;
  return now_s;
}

// The packages device `d`, free at `at`, finishes by time `t` (at most `cap`). A relative
// tolerance counts a package finishing at `t` up to rounding as finished: ties are claimed by both.
index_t finished_by(double t, double at, double per_package_s, index_t cap) {
  const double k = (t - at) / per_package_s;
  if (!(k > 0)) return 0;
  const double n = std::floor(k * (1 + 1e-9) + 1e-9);
  return n >= static_cast<double>(cap) ? cap : static_cast<index_t>(n);
}

}  // namespace

index_t packages_to_take(std::span<const DeviceOutlook> devices, std::size_t me, index_t remaining,
                         double now_s) {
  if (remaining <= 0 || me >= devices.size()) return 0;
  const auto measured = [](const DeviceOutlook& d) {
    return d.working && d.per_package_s > 0 && std::isfinite(d.per_package_s);
  };
  if (!devices[me].working) return 0;
  const bool any_measured = std::any_of(devices.begin(), devices.end(), measured);
  // Nobody measured yet (the first packages of a first run): the devices count as equally fast,
  // one time unit a package.
  const auto outlook = [&](const DeviceOutlook& d) {
    if (any_measured || !d.working) return d;
    return DeviceOutlook{.per_package_s = 1,
                         .free_at_s = now_s + static_cast<double>(d.held),
                         .held = d.held,
                         .working = true};
  };
  const DeviceOutlook mine = outlook(devices[me]);
  // Not measured beside devices that are: one package at a time until its first is measured.
  if (!measured(mine)) return mine.held > 0 ? 0 : 1;
  struct Capacity {
    double at;
    double per_package_s;
  };
  std::vector<Capacity> known;
  for (const DeviceOutlook& raw : devices) {
    const DeviceOutlook d = outlook(raw);
    if (measured(d)) known.push_back({available_at(d, now_s), d.per_package_s});
  }
  const Capacity self{available_at(mine, now_s), mine.per_package_s};
  // Slower than some other measured device: its own packages at their cautious time.
  bool slower = false;
  for (const Capacity& c : known) slower = slower || c.per_package_s < mine.per_package_s;
  const double own_s = slower ? std::max(mine.per_package_s, mine.cautious_s) : mine.per_package_s;
  const auto placed_by = [&](double t) {
    index_t n = 0;
    for (const Capacity& c : known) {
      n += finished_by(t, c.at, c.per_package_s, remaining);
      if (n >= remaining) return remaining;
    }
    return n;
  };
  // The time by which the devices together finish the packages left, placing each on the device
  // that finishes it first: the least t with placed_by(t) >= remaining, by bisection between a time
  // when none is done and one by which this device alone would have done them all.
  double lo = now_s;
  for (const Capacity& c : known) lo = std::min(lo, c.at);
  double hi = self.at + static_cast<double>(remaining) * self.per_package_s;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::abs(hi)); ++i) {
    const double mid = lo + (hi - lo) / 2;
    (placed_by(mid) >= remaining ? hi : lo) = mid;
  }
  return std::min(remaining, finished_by(hi, self.at, own_s, remaining));
}

std::vector<bool> devices_taking_part(std::span<const double> slowness, index_t count) {
  const std::size_t n = slowness.size();
  std::vector<bool> part(n, false);
  double total = 0;
  std::size_t quickest = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(slowness[i] > 0) || !std::isfinite(slowness[i])) continue;
    total += 1.0 / slowness[i];
    if (quickest == n || slowness[i] < slowness[quickest]) quickest = i;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!(slowness[i] > 0) || !std::isfinite(slowness[i])) continue;
    // In the quickest device's packages: when the others, free now, would have computed all
    // `count` (at least one whole package: they compute packages, not fractions of them).
    const double others = total - 1.0 / slowness[i];
    const double others_end =
        others > 0 ? std::max(static_cast<double>(count) / others, slowness[quickest]) : 0.0;
    part[i] = i == quickest || count <= 0 || others <= 0 || slowness[i] <= others_end;
  }
  return part;
}

std::vector<index_t> split_by_speed(index_t count, std::span<const double> speeds) {
  const std::size_t n = speeds.size();
  std::vector<index_t> shares(n, 0);
  if (n == 0 || count <= 0) return shares;
  std::vector<double> w(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    w[i] = speeds[i] > 0 && std::isfinite(speeds[i]) ? speeds[i] : 0.0;
  double total = std::accumulate(w.begin(), w.end(), 0.0);
  if (!(total > 0)) {
    std::fill(w.begin(), w.end(), 1.0);
    total = static_cast<double>(n);
  }
  // Whole shares first, then one more to the largest remainders (the lower index on a tie), so the
  // shares sum to `count` exactly.
  std::vector<double> rest(n, 0.0);
  index_t given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = static_cast<double>(count) * w[i] / total;
    shares[i] = std::min(count, static_cast<index_t>(std::floor(exact)));
    rest[i] = exact - static_cast<double>(shares[i]);
    given += shares[i];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rest[a] > rest[b]; });
  for (std::size_t k = 0; given < count; k = (k + 1) % n) {
    if (w[order[k]] > 0) {
      ++shares[order[k]];
      ++given;
    }
  }
  // Rounding the other way (floor of a sum just under a whole number) could give one too many.
  for (std::size_t k = n; given > count; k = k == 0 ? n - 1 : k - 1) {
    if (k < n && shares[order[k]] > 0) {
      --shares[order[k]];
      --given;
    }
  }
  return shares;
}

int prefetch_depth(double fetch_s, double compute_s, int most) {
  most = std::max(1, most);
  if (!(compute_s > 0) || !std::isfinite(compute_s) || !std::isfinite(fetch_s)) return most;
  if (fetch_s <= compute_s) return 1;
  const double ahead = std::ceil(fetch_s / compute_s);
  return ahead >= static_cast<double>(most) ? most : std::max(1, static_cast<int>(ahead));
}

}  // namespace hit::detail
