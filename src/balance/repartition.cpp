#include "balance/repartition.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <iterator>

#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"

namespace hit::balance::detail {

using fpm::Distribution;
using fpm::evaluate;
using fpm::Model;
using fpm::ModelKind;
using fpm::partition;
using fpm::partition_even;
using fpm::Point;

std::vector<Model> empty_models(int devices, ModelKind kind) {
  if (devices < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dynamic partitioning: {} devices (at least one is needed)", devices));
  }
  return std::vector<Model>(static_cast<std::size_t>(devices), Model(kind));
}

namespace {

// How much faster the lower end of a gap between two measured points must be than the upper end
// for the straight line between them to count as a guess across a cliff.
constexpr double cliff_speed_ratio = 2.0;

// Gap exploration (dynamic partitioning only). Between two measured points the partial model is a
// straight line; when the device's speed drops sharply from one point to the next (a memory
// cliff somewhere in between, as in Clarke et al.'s Fig. 1.4), that line predicts the device
// slower than it is everywhere below the cliff, so the partitioner gives it too little, the next
// measurement lands a little higher, and the share creeps towards the balance by a small fraction
// of the gap per step (tens of steps), or stays at the lower point for good when the line's
// balance rounds down to it. Here a device whose proposed share falls inside such a gap, or on
// its lower point, is instead given the share it would finish by the proposed makespan at the speed
// of the gap's lower point, but at most the middle of the gap: either that share balances, or the
// measurement there narrows the gap by half or more, so a cliff is located in log2(gap) steps. The
// other devices share the rest as the partitioner decides. Returns `proposal` when nothing applies.
Distribution explore_gaps(const std::string& algorithm, std::int64_t n,
                          const std::vector<Model>& models, const Distribution& proposal) {
  const double makespan = proposal.makespan;
  if (!(makespan > 0) || !std::isfinite(makespan)) return proposal;
  Sizes d = proposal.sizes();
  std::vector<bool> fixed(models.size(), false);
  std::int64_t fixed_sum = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& pts = models[i].points();
    const std::int64_t share = d[i];
    const auto above = std::upper_bound(pts.begin(), pts.end(), share,
                                        [](std::int64_t x, const Point& q) { return x < q.d; });
    if (share <= 0 || above == pts.begin() || above == pts.end()) continue;
    const Point& a = *std::prev(above);
    const Point& b = *above;
    const double speed_a = static_cast<double>(a.d) / a.t;
    const double speed_b = static_cast<double>(b.d) / b.t;
    if (!(speed_a > cliff_speed_ratio * speed_b)) continue;
    const auto optimistic = static_cast<std::int64_t>(std::floor(makespan * speed_a));
    const std::int64_t middle = a.d + (b.d - a.d) / 2;
    std::int64_t probe = std::max(share, std::min(optimistic, middle));
    probe = std::min({probe, b.d - 1, models[i].capacity()});
    if (probe <= share) continue;
    d[i] = probe;
    fixed[i] = true;
    fixed_sum += probe;
  }
  if (fixed_sum == 0 || fixed_sum > n) return proposal;
  std::vector<std::size_t> free;
  std::vector<Model> sub;
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (!fixed[i]) {
      free.push_back(i);
      sub.push_back(models[i]);
    }
  }
  if (sub.empty()) return fixed_sum == n ? evaluate(models, d, algorithm) : proposal;
  try {
    const Distribution rest = partition(algorithm, sub, n - fixed_sum);
    for (std::size_t k = 0; k < free.size(); ++k) d[free[k]] = rest.parts[k].d;
  } catch (const Error&) {
    return proposal;  // the others cannot hold the rest: keep what the partitioner said
  }
  return evaluate(models, d, algorithm);
}

}  // namespace

// Partitions among the devices that have models; a device that has none yet (it never had work)
// gets a probe share of one unit, taken from the largest share, so that it gets measured. With
// `explore`, shares inside a gap across a cliff are probed (explore_gaps).
Distribution repartition_local(const std::string& algorithm, std::int64_t n,
                               const std::vector<Model>& models, bool explore) {
  std::vector<std::size_t> known, unknown;
  for (std::size_t i = 0; i < models.size(); ++i) {
    (models[i].empty() && models[i].capacity() > 0 ? unknown : known).push_back(i);
  }
  if (unknown.empty()) {
    Distribution proposal = partition(algorithm, models, n);
    return explore ? explore_gaps(algorithm, n, models, proposal) : proposal;
  }
  const bool any_usable =
      std::any_of(known.begin(), known.end(), [&](std::size_t i) { return models[i].usable(); });
  if (!any_usable) {
    Distribution d = partition_even(models, n);
    d.algorithm = algorithm;
    return d;
  }
  std::vector<Model> sub;
  sub.reserve(known.size());
  for (std::size_t i : known) sub.push_back(models[i]);
  const Distribution part = partition(algorithm, sub, n);
  Sizes d(models.size(), 0);
  for (std::size_t k = 0; k < known.size(); ++k) d[known[k]] = part.parts[k].d;
  for (std::size_t i : unknown) {
    const auto donor = std::max_element(d.begin(), d.end());  // first largest: the lower index
    if (*donor < 2) break;
    --*donor;
    d[i] = 1;
  }
  return evaluate(models, d, algorithm);
}

namespace {

// Two nearby points whose speeds differ by more than this are not noise around one speed but the
// two sides of a cliff, and stay apart.
constexpr double max_merge_speed_ratio = 1.25;

}  // namespace

// Adds a measured point to a partial model. A point within `within` × d of one the model holds is
// merged with it instead (d and t averaged): near the balance the loop measures shares a few units
// apart, and the straight line between two such points has a slope made of their noise (times
// that fall as d grows, which coarsening then flattens), so the partitioner's next step would
// follow the noise. Merged, the neighbourhood becomes one point, and slopes come from points far
// apart. The new measurement weighs at least as much as everything merged before it (weights are
// repetitions, the old ones capped at the new count): a shared machine's speed drifts over
// seconds, and an average over all past steps would describe a machine that no longer exists.
// Points on the two sides of a cliff are never merged.
void add_measurement(Model& model, const Point& point, double within) {
  const auto& pts = model.points();
  const Point* near = nullptr;
  const double speed = static_cast<double>(point.d) / point.t;
  for (const Point& q : pts) {
    const double gap = std::abs(static_cast<double>(q.d - point.d));
    const double ratio = speed * q.t / static_cast<double>(q.d);
    if (q.d != point.d && gap <= within * static_cast<double>(point.d) &&
        ratio < max_merge_speed_ratio && ratio > 1 / max_merge_speed_ratio &&
        (near == nullptr || gap < std::abs(static_cast<double>(near->d - point.d)))) {
      near = &q;
    }
  }
  if (near == nullptr) {
    model.add(point);
    return;
  }
  const double wb = std::max(point.reps, 1);
  const double wa = std::min<double>(std::max(near->reps, 1), wb);
  const double w = wa + wb;
  Point merged;
  merged.d =
      std::llround((wa * static_cast<double>(near->d) + wb * static_cast<double>(point.d)) / w);
  merged.t = (wa * near->t + wb * point.t) / w;
  merged.reps = near->reps + point.reps;
  merged.ci = std::sqrt(wa * wa * near->ci * near->ci + wb * wb * point.ci * point.ci) / w;
  const std::int64_t old_d = near->d;
  model.remove(old_d);
  model.add(merged);
}

// The step taken when the models see nothing better than the distribution just measured although
// its measured times disagree: shares proportional to the speeds measured in this step, d_i/t_i,
// with the makespan that constant models of those speeds predict. The models mix steps taken
// seconds apart, and on a shared machine whose speed drifts they can agree on a balance that the
// devices, measured together, do not show; the speeds of one step are measured under the same
// conditions. Returns an empty distribution when that is not possible (a device without a share or
// a measurement) or when the models predict the step far worse than what was measured (it would
// cross a cliff the models already know).
Distribution proportional_step(std::span<const Model> models, std::span<const Point> measured,
                               const Sizes& current, std::int64_t n, const std::string& algorithm,
                               double measured_makespan, double tolerance) {
  std::vector<Model> local;
  for (std::size_t i = 0; i < current.size(); ++i) {
    const Point& p = measured[i];
    if (current[i] <= 0 || p.d != current[i] || !(p.t > 0)) return {};
    local.emplace_back(std::vector<Point>{Point{p.d, p.t, 1, 0}}, ModelKind::constant,
                       models[i].capacity());
  }
  try {
    Distribution next = partition("proportional", local, n);
    const Distribution predicted = evaluate(models, next.sizes(), algorithm);
    if (!(predicted.makespan <= (1 + tolerance) * measured_makespan)) return {};
    return next;
  } catch (const Error&) {
    return {};
  }
}

void check_devices(std::size_t models, std::size_t devices, std::string_view what) {
  if (models != devices) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("{}: the context has {} devices but {} were given", what, models, devices));
  }
}

}  // namespace hit::balance::detail
