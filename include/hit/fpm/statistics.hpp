#pragma once
// The statistics of kernel benchmarking (FuPerMod §4.1): Student-t confidence intervals and the
// median-based rejection of timing spikes, so that one slow run cannot send the work elsewhere.

#include <span>
#include <vector>

namespace hit::fpm {

// Quantile of Student's t distribution with `df` > 0 degrees of freedom: the x with
// P(T <= x) = p, for 0 < p < 1. Error(invalid_argument) outside those ranges.
double student_t_quantile(double p, double df);
double student_t_cdf(double x, double df);

double median(std::span<const double> values);

// Quantile of the range (max − min) of k >= 2 independent standard normal variables: the w with
// P(range <= w) = p, for 0 < p < 1 (the studentized range with infinite degrees of freedom). It
// tells whether k measured medians differ by more than their standard errors explain.
// Error(invalid_argument) outside those ranges.
double normal_range_quantile(double p, int k);

// The samples that are not outliers: those within k·1.4826·MAD of the median (MAD = median absolute
// deviation, scaled to a standard deviation for normal data), where a deviation of at most
// `floor`·median is never an outlier (identical timings have MAD = 0). Fewer than 3 samples are
// kept as they are. The order of the samples is kept.
std::vector<double> reject_outliers(std::span<const double> samples, double k = 3.0,
                                    double floor = 0.05);

struct Summary {
  int count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n − 1)
  double ci = 0;      // half-width of the two-sided `confidence` interval of the mean (0 if n < 2)
};
Summary summarize(std::span<const double> samples, double confidence = 0.95);

}  // namespace hit::fpm
