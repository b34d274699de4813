#pragma once
// Computation performance models of one device (FuPerMod §4.2; docs/fpm.md, "The model").
//
// A model predicts the time t(x) of x computation units from measured points. Speed is x / t(x)
// (units per second). Three interpolations of the same points are offered:
//  - constant (CPM): the speed of the most recently added point, at every size;
//  - piecewise: time linear between points, an implicit point (0, 0) first (so constant speed
//    below the first point), and the last segment extended beyond the last point;
//  - akima: an Akima spline of time through the points, constant speed below the first point and
//    the last secant extended beyond the last one.
// When the extended last segment would not rise (the last time is not above the one before), the
// model continues with the constant speed of the last point instead: a decreasing extension would
// predict ever shorter times for more work.
//
// A capacity (the most units the device can hold, e.g. its memory) makes t(x) = +inf beyond it,
// so no partitioner gives the device more.

#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hit/fpm/akima.hpp"
#include "hit/fpm/point.hpp"

namespace hit::fpm {

enum class ModelKind { constant, piecewise, akima };

std::string_view to_string(ModelKind kind) noexcept;
// "constant" (or "cpm"), "piecewise" (or "pwl"), "akima"; anything else is an Error(parse)
// listing the names.
ModelKind parse_model_kind(std::string_view name);

// Capacity of a device without a declared limit.
inline constexpr std::int64_t unlimited = std::numeric_limits<std::int64_t>::max();

class Model {
 public:
  // A model without points (it predicts nothing until points are added).
  explicit Model(ModelKind kind = ModelKind::piecewise, std::int64_t capacity = unlimited);
  // Points with strictly increasing d >= 1 and finite t > 0, none beyond the capacity;
  // anything else is an Error(model) naming the point.
  Model(std::vector<Point> points, ModelKind kind = ModelKind::piecewise,
        std::int64_t capacity = unlimited);
  // A constant-speed model (units per second > 0), e.g. for tests and CPM baselines.
  static Model constant_speed(double units_per_second, std::int64_t capacity = unlimited);

  ModelKind kind() const noexcept { return kind_; }
  const std::vector<Point>& points() const noexcept { return points_; }
  std::int64_t capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return points_.empty(); }
  // Can this device take work? It has points and a capacity of at least one unit.
  bool usable() const noexcept { return !points_.empty() && capacity_ > 0; }

  // Adds a measurement; one at the same d is replaced (the newest wins, as in dynamic loops).
  void add(const Point& point);
  // Drops the point at d (nothing when there is none).
  void remove(std::int64_t d);
  // The most units the device may get (>= 0); points beyond it are dropped.
  void set_capacity(std::int64_t capacity);
  // The same points and capacity, interpolated another way.
  Model with_kind(ModelKind kind) const;

  // Free-form annotations kept in model files as `# key: value` (device, kernel, date,
  // flops_per_unit, ...). `capacity` is not an annotation: use capacity().
  const std::map<std::string, std::string>& info() const noexcept { return info_; }
  void set_info(const std::string& key, const std::string& value);

  // Predicted seconds for x units: 0 at x <= 0, +inf beyond the capacity. Throws Error(model)
  // when the model has no points.
  double time(double x) const;
  // x / time(x) in units per second (the limit at x -> 0 for x <= 0; 0 beyond the capacity).
  double speed(double x) const;
  // d(time)/dx where defined (the right derivative at knots).
  double slope(double x) const;

  // The running maximum t̂(x) = max_{0<=y<=x} t(y): non-decreasing even when t is not. This is the
  // time the partitioners balance (a device that finishes x units by T also finishes fewer).
  double envelope_time(double x) const;
  // X(T) = min(capacity, sup{x : t̂(x) <= T}): how many units the device finishes by time T
  // (first crossing of T). +inf (or the capacity) for T = +inf.
  double inverse(double time) const;
  // True when t never decreases on [0, capacity].
  bool monotone() const;

  // The shape restriction of the geometric partitioner (FuPerMod's COARSEN; docs/fpm.md,
  // "Coarsening"): for piecewise models, the running maximum of the point times made strictly
  // increasing; beyond the last point, constant speed when the envelope's last segment is flat.
  // Other kinds are returned as they are (their inverse already works on the envelope).
  Model coarsened() const;

 private:
  void rebuild();
  std::size_t piece_index(double x) const;
  double piece_max(std::size_t k, double u_end) const;

  ModelKind kind_ = ModelKind::piecewise;
  std::int64_t capacity_ = unlimited;
  std::vector<Point> points_;
  std::size_t newest_ = 0;  // index in points_ of the most recently added point (for CPM)
  bool constant_tail_ = false;
  std::map<std::string, std::string> info_;

  // Derived from the points: pieces covering [0, +inf) (the last one unbounded), and the
  // maximum of t over [0, start of piece k] for the envelope.
  std::vector<Cubic> pieces_;
  std::vector<double> max_before_;
};

}  // namespace hit::fpm
