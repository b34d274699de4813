#include "hit/fpm/model.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>

#include "hit/core/error.hpp"

namespace hit::fpm {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

void check_point(const Point& p, std::size_t index) {
  if (p.d < 1) {
    throw Error(
        ErrorKind::model,
        fmt::format("model point {}: d = {} is not a problem size (must be >= 1)", index, p.d));
  }
  if (!std::isfinite(p.t) || p.t <= 0) {
    throw Error(
        ErrorKind::model,
        fmt::format("model point {} (d = {}): t = {} is not a time (must be finite and > 0)", index,
                    p.d, p.t));
  }
  if (p.reps < 0 || !std::isfinite(p.ci) || p.ci < 0) {
    throw Error(ErrorKind::model,
                fmt::format("model point {} (d = {}): reps = {} and ci = {} must be >= 0", index,
                            p.d, p.reps, p.ci));
  }
}

// Roots of the derivative of a cubic piece strictly inside (0, u_end), sorted.
std::array<double, 2> critical_points(const Cubic& c, double u_end, int& count) {
  count = 0;
  std::array<double, 2> out{};
  const double a = 3 * c.c3, b = 2 * c.c2, k = c.c1;
  auto keep = [&](double u) {
    if (u > 0 && u < u_end && std::isfinite(u)) out[static_cast<std::size_t>(count++)] = u;
  };
  if (a == 0) {
    if (b != 0) keep(-k / b);
  } else {
    const double disc = b * b - 4 * a * k;
    if (disc >= 0) {
      // The numerically stable pair of roots.
      const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
      if (q != 0) {
        keep(q / a);
        keep(k / q);
      } else {
        keep(0);  // b = 0 and k = 0: a double root at 0, outside the open interval
      }
    }
  }
  if (count == 2 && out[0] > out[1]) std::swap(out[0], out[1]);
  return out;
}

}  // namespace

std::string_view to_string(ModelKind kind) noexcept {
  switch (kind) {
    case ModelKind::constant:
      return "constant";
    case ModelKind::piecewise:
      return "piecewise";
    case ModelKind::akima:
      return "akima";
  }
  return "?";
}

ModelKind parse_model_kind(std::string_view name) {
  if (name == "constant" || name == "cpm") return ModelKind::constant;
  if (name == "piecewise" || name == "pwl") return ModelKind::piecewise;
  if (name == "akima") return ModelKind::akima;
  throw Error(ErrorKind::parse, fmt::format("unknown model kind '{}' (known: constant, piecewise, "
                                            "akima)",
                                            name));
}

Model::Model(ModelKind kind, std::int64_t capacity) : kind_(kind) {
  set_capacity(capacity);
}

Model::Model(std::vector<Point> points, ModelKind kind, std::int64_t capacity)
    : kind_(kind), points_(std::move(points)) {
  for (std::size_t i = 0; i < points_.size(); ++i) {
    check_point(points_[i], i);
    if (i > 0 && points_[i].d <= points_[i - 1].d) {
      throw Error(ErrorKind::model,
                  fmt::format("model point {}: d = {} does not increase (the point before has d = "
                              "{}); points must be sorted by d without repeats",
                              i, points_[i].d, points_[i - 1].d));
    }
  }
  if (capacity < 0) {
    throw Error(ErrorKind::model,
                fmt::format("model capacity {} is negative (must be >= 0 units)", capacity));
  }
  if (!points_.empty() && points_.back().d > capacity) {
    throw Error(ErrorKind::model,
                fmt::format("model point d = {} is beyond the capacity of {} units",
                            points_.back().d, capacity));
  }
  capacity_ = capacity;
  newest_ = points_.empty() ? 0 : points_.size() - 1;
  rebuild();
}

Model Model::constant_speed(double units_per_second, std::int64_t capacity) {
  if (!std::isfinite(units_per_second) || units_per_second <= 0) {
    throw Error(ErrorKind::model,
                fmt::format("constant speed {} units/s: must be finite and > 0", units_per_second));
  }
  return Model({Point{1, 1.0 / units_per_second, 1, 0}}, ModelKind::constant, capacity);
}

void Model::add(const Point& point) {
  check_point(point, points_.size());
  if (point.d > capacity_) {
    throw Error(
        ErrorKind::model,
        fmt::format("model point d = {} is beyond the capacity of {} units", point.d, capacity_));
  }
  auto it = std::lower_bound(points_.begin(), points_.end(), point.d,
                             [](const Point& p, std::int64_t d) { return p.d < d; });
  if (it != points_.end() && it->d == point.d) {
    *it = point;
  } else {
    it = points_.insert(it, point);
  }
  newest_ = static_cast<std::size_t>(it - points_.begin());
  rebuild();
}

void Model::remove(std::int64_t d) {
  const auto it = std::lower_bound(points_.begin(), points_.end(), d,
                                   [](const Point& p, std::int64_t x) { return p.d < x; });
  if (it == points_.end() || it->d != d) return;
  const auto at = static_cast<std::size_t>(it - points_.begin());
  points_.erase(it);
  if (newest_ == at) {
    newest_ = points_.empty() ? 0 : points_.size() - 1;  // the newest is gone: say the last
  } else if (newest_ > at) {
    --newest_;
  }
  rebuild();
}

void Model::set_capacity(std::int64_t capacity) {
  if (capacity < 0) {
    throw Error(ErrorKind::model,
                fmt::format("model capacity {} is negative (must be >= 0 units)", capacity));
  }
  capacity_ = capacity;
  const auto before = points_.size();
  std::erase_if(points_, [&](const Point& p) { return p.d > capacity; });
  if (points_.size() != before || newest_ >= points_.size()) {
    newest_ = points_.empty() ? 0 : points_.size() - 1;
  }
  rebuild();
}

Model Model::with_kind(ModelKind kind) const {
  Model out = *this;
  out.kind_ = kind;
  out.rebuild();
  return out;
}

void Model::set_info(const std::string& key, const std::string& value) {
  info_[key] = value;
}

void Model::rebuild() {
  pieces_.clear();
  max_before_.clear();
  if (points_.empty()) return;
  const std::size_t m = points_.size();

  auto tail = [&](double x, double t, double secant) {
    // Beyond the last point: the last segment, unless it does not rise (then constant speed).
    const double rise = (secant > 0 && !constant_tail_) ? secant : t / x;
    pieces_.push_back(Cubic{x, inf, t, rise, 0, 0});
  };

  if (kind_ == ModelKind::constant) {
    const Point& p = points_[newest_];
    pieces_.push_back(Cubic{0, inf, 0, p.t / static_cast<double>(p.d), 0, 0});
  } else if (kind_ == ModelKind::piecewise || m < 3) {
    double x0 = 0, t0 = 0;
    for (const Point& p : points_) {
      const double x1 = static_cast<double>(p.d);
      pieces_.push_back(Cubic{x0, x1 - x0, t0, (p.t - t0) / (x1 - x0), 0, 0});
      x0 = x1;
      t0 = p.t;
    }
    tail(x0, t0, pieces_.back().c1);
  } else {
    std::vector<double> x(m), y(m);
    for (std::size_t i = 0; i < m; ++i) {
      x[i] = static_cast<double>(points_[i].d);
      y[i] = points_[i].t;
    }
    // The origin stays outside the spline: its huge first slope would overshoot at small sizes.
    pieces_.push_back(Cubic{0, x[0], 0, y[0] / x[0], 0, 0});
    const AkimaSpline spline(x, y);
    for (const Cubic& c : spline.pieces()) pieces_.push_back(c);
    tail(x[m - 1], y[m - 1], (y[m - 1] - y[m - 2]) / (x[m - 1] - x[m - 2]));
  }

  max_before_.resize(pieces_.size() + 1);
  max_before_[0] = 0;
  for (std::size_t k = 0; k < pieces_.size(); ++k) {
    const bool bounded = std::isfinite(pieces_[k].h);
    max_before_[k + 1] =
        bounded ? std::max(max_before_[k], piece_max(k, pieces_[k].h)) : inf;  // the tail rises
  }
}

std::size_t Model::piece_index(double x) const {
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), x,
                             [](double v, const Cubic& c) { return v < c.x; });
  return it == pieces_.begin() ? 0 : static_cast<std::size_t>(it - pieces_.begin()) - 1;
}

double Model::piece_max(std::size_t k, double u_end) const {
  const Cubic& c = pieces_[k];
  double best = std::max(c.value(0), c.value(u_end));
  if (c.c2 != 0 || c.c3 != 0) {
    int count = 0;
    const auto crit = critical_points(c, u_end, count);
    for (int i = 0; i < count; ++i)
      best = std::max(best, c.value(crit[static_cast<std::size_t>(i)]));
  }
  return best;
}

double Model::time(double x) const {
  if (points_.empty()) throw Error(ErrorKind::model, "the model has no points to predict from");
  if (x <= 0) return 0;
  if (x > static_cast<double>(capacity_)) return inf;
  const Cubic& c = pieces_[piece_index(x)];
  return c.value(x - c.x);
}

double Model::speed(double x) const {
  if (points_.empty()) throw Error(ErrorKind::model, "the model has no points to predict from");
  if (x <= 0) return 1.0 / pieces_.front().c1;
  if (x > static_cast<double>(capacity_)) return 0;
  return x / time(x);
}

double Model::slope(double x) const {
  if (points_.empty()) throw Error(ErrorKind::model, "the model has no points to predict from");
  const Cubic& c = pieces_[piece_index(std::max(x, 0.0))];
  return c.slope(std::max(x, 0.0) - c.x);
}

double Model::envelope_time(double x) const {
  if (points_.empty()) throw Error(ErrorKind::model, "the model has no points to predict from");
  if (x <= 0) return 0;
  if (x > static_cast<double>(capacity_)) return inf;
  const std::size_t k = piece_index(x);
  return std::max(max_before_[k], piece_max(k, x - pieces_[k].x));
}

double Model::inverse(double time_limit) const {
  if (points_.empty()) throw Error(ErrorKind::model, "the model has no points to predict from");
  const double cap = capacity_ == unlimited ? inf : static_cast<double>(capacity_);
  if (!(time_limit > 0)) return 0;
  if (std::isinf(time_limit)) return cap;
  // The first piece whose maximum exceeds the limit holds the first crossing.
  const auto it = std::upper_bound(max_before_.begin() + 1, max_before_.end(), time_limit);
  const std::size_t k = static_cast<std::size_t>(it - max_before_.begin()) - 1;
  const Cubic& c = pieces_[k];
  double u = 0;
  if (c.c2 == 0 && c.c3 == 0) {
    u = (time_limit - c.c0) / c.c1;
  } else {
    // Split the piece where it turns; on the first monotone part whose end exceeds the limit, the
    // crossing is bracketed and found by bisection.
    int count = 0;
    const auto crit = critical_points(c, c.h, count);
    double lo = 0;
    for (int i = 0; i <= count; ++i) {
      const double hi = i < count ? crit[static_cast<std::size_t>(i)] : c.h;
      if (c.value(hi) > time_limit) {
        double a = lo, b = hi;
        for (int step = 0; step < 200 && b - a > 1e-15 * std::max(1.0, c.x + b); ++step) {
          const double mid = 0.5 * (a + b);
          (c.value(mid) > time_limit ? b : a) = mid;
        }
        u = a;
        break;
      }
      lo = hi;
    }
  }
  return std::min(cap, c.x + std::max(0.0, u));
}

bool Model::monotone() const {
  if (points_.empty()) return true;
  double scale = 0;
  for (const Point& p : points_) scale = std::max(scale, p.t / static_cast<double>(p.d));
  const double tolerance = -1e-9 * scale;
  for (const Cubic& c : pieces_) {
    if (c.x >= static_cast<double>(capacity_)) break;
    if (!std::isfinite(c.h)) return c.c1 >= tolerance;
    double lowest = std::min(c.slope(0), c.slope(c.h));
    if (c.c3 != 0) {
      const double vertex = -c.c2 / (3 * c.c3);
      if (vertex > 0 && vertex < c.h) lowest = std::min(lowest, c.slope(vertex));
    }
    if (lowest < tolerance) return false;
  }
  return true;
}

Model Model::coarsened() const {
  if (kind_ != ModelKind::piecewise || points_.empty()) return *this;
  Model out = *this;
  bool flat_end = false;
  double running = 0;
  for (std::size_t i = 0; i < out.points_.size(); ++i) {
    Point& p = out.points_[i];
    const double envelope = std::max(running, p.t);
    // Strictly increasing times keep every line through the origin from meeting a speed graph
    // more than once; the bump is far below any measurement's precision.
    p.t = (i > 0 && envelope <= running) ? running * (1 + 1e-12) : envelope;
    if (i + 1 == out.points_.size()) flat_end = i > 0 && envelope <= running;
    running = p.t;
  }
  out.constant_tail_ = flat_end;
  out.rebuild();
  return out;
}

}  // namespace hit::fpm
