#include "hit/fpm/statistics.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "hit/core/error.hpp"

namespace hit::fpm {
namespace {

// Continued fraction of the regularised incomplete beta function I_x(a, b), evaluated with the
// modified Lentz method; converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < tiny) d = tiny;
  d = 1 / d;
  double f = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    // Even step: m (b − m) x / ((a + 2m − 1)(a + 2m)).
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    f *= d * c;
    // Odd step: −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    f *= delta;
    if (std::abs(delta - 1) < 1e-16) break;
  }
  return f;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double student_t_cdf(double x, double df) {
  if (!(df > 0)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("Student t: {} degrees of freedom (must be > 0)", df));
  }
  if (std::isinf(x)) return x > 0 ? 1 : 0;
  // P(|T| > |x|) = I_{df/(df+x²)}(df/2, 1/2).
  const double tail = 0.5 * incomplete_beta(0.5 * df, 0.5, df / (df + x * x));
  return x >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("Student t quantile: probability {} (must be between 0 and 1)", p));
  }
  if (!(df > 0)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("Student t: {} degrees of freedom (must be > 0)", df));
  }
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  // The CDF is increasing: bracket the quantile by doubling, then bisect to full precision.
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e300) hi *= 2;
  for (int i = 0; i < 400 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {

// P(range of k standard normals <= w) = k ∫ φ(x) (Φ(x + w) − Φ(x))^(k−1) dx, by Simpson's rule
// over ±9 (the integrand is below 1e−17 outside).
double normal_range_cdf(double w, int k) {
  if (w <= 0) return 0;
  const auto phi = [](double x) {
    return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
  };
  const auto Phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  constexpr int intervals = 3600;  // even
  constexpr double lo = -9, hi = 9, h = (hi - lo) / intervals;
  double sum = 0;
  for (int i = 0; i <= intervals; ++i) {
    const double x = lo + i * h;
    const double f = phi(x) * std::pow(Phi(x + w) - Phi(x), k - 1);
    sum += (i == 0 || i == intervals ? 1 : i % 2 == 1 ? 4 : 2) * f;
  }
  return std::min(1.0, k * sum * h / 3);
}

}  // namespace

double normal_range_quantile(double p, int k) {
  if (!(p > 0 && p < 1)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("normal range quantile: probability {} (must be between 0 and 1)", p));
  }
  if (k < 2) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("normal range quantile: {} variables (must be >= 2)", k));
  }
  // The CDF is increasing in w: bracket, then bisect.
  double lo = 0, hi = 4;
  while (normal_range_cdf(hi, k) < p && hi < 64) hi *= 2;
  for (int i = 0; i < 60 && hi - lo > 1e-9; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_range_cdf(mid, k) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double median(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(values.begin(), values.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

std::vector<double> reject_outliers(std::span<const double> samples, double k, double floor) {
  std::vector<double> kept(samples.begin(), samples.end());
  if (samples.size() < 3) return kept;
  const double med = median(samples);
  std::vector<double> deviation;
  deviation.reserve(samples.size());
  for (double s : samples) deviation.push_back(std::abs(s - med));
  // 1.4826·MAD estimates the standard deviation of normal data, unmoved by a few spikes.
  const double limit = std::max(k * 1.4826 * median(deviation), floor * std::abs(med));
  std::erase_if(kept, [&](double s) { return std::abs(s - med) > limit; });
  return kept;
}

Summary summarize(std::span<const double> samples, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("confidence level {} (must be between 0 and 1)", confidence));
  }
  Summary s;
  s.count = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / s.count;
  if (s.count < 2) return s;
  double sq = 0;
  for (double v : samples) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / (s.count - 1));
  s.ci = student_t_quantile(0.5 * (1 + confidence), s.count - 1) * s.stddev / std::sqrt(s.count);
  return s;
}

}  // namespace hit::fpm
