#include "hit/fpm/plot.hpp"

#include "hit/core/file.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>

namespace hit::fpm {
namespace {

constexpr std::array<const char*, 8> palette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A "nice" tick step (1, 2 or 5 × 10^k) giving about `count` ticks over [0, top].
double tick_step(double top, int count) {
  const double raw = top / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string number(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.3g}", v);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string speed_plot_svg(std::span<const Model> models, const std::optional<Distribution>& dist,
                           const PlotOptions& options) {
  const double w = options.width, h = options.height;
  const double left = 80, right = 20, top = 40, bottom = 55;
  const double pw = w - left - right, ph = h - top - bottom;

  double xmax = 0;
  for (const Model& m : models) {
    if (!m.empty()) xmax = std::max(xmax, static_cast<double>(m.points().back().d));
  }
  if (dist) {
    for (const Part& p : dist->parts) xmax = std::max(xmax, static_cast<double>(p.d));
  }
  xmax = xmax > 0 ? xmax * 1.08 : 1;

  // Each curve sampled evenly plus at its measured sizes, so corners of piecewise models are exact.
  std::vector<std::vector<std::pair<double, double>>> curves(models.size());
  double ymax = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Model& m = models[i];
    if (m.empty()) continue;
    std::vector<double> xs;
    constexpr int samples = 240;
    for (int j = 1; j <= samples; ++j) xs.push_back(xmax * j / samples);
    for (const Point& p : m.points()) xs.push_back(static_cast<double>(p.d));
    const double cap = static_cast<double>(m.capacity());
    if (cap < xmax) xs.push_back(cap);
    std::sort(xs.begin(), xs.end());
    for (double x : xs) {
      if (x > cap || x > xmax) continue;
      const double s = m.speed(x);
      curves[i].emplace_back(x, s);
      ymax = std::max(ymax, s);
    }
    for (const Point& p : m.points()) ymax = std::max(ymax, static_cast<double>(p.d) / p.t);
  }
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  const auto sx = [&](double x) { return left + pw * x / xmax; };
  const auto sy = [&](double y) { return top + ph * (1 - y / ymax); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      w, h, left + pw / 2, xml_escape(options.title));

  // Axes, grid and ticks.
  const double xs = tick_step(xmax, 8), ys = tick_step(ymax, 6);
  for (double x = 0; x <= xmax + 1e-9 * xmax; x += xs) {
    svg += fmt::format(
        "<line x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{0:.2f}\" y2=\"{2:.2f}\" stroke=\"#e5e5e5\"/>\n"
        "<text x=\"{0:.2f}\" y=\"{3:.2f}\" text-anchor=\"middle\">{4}</text>\n",
        sx(x), top, top + ph, top + ph + 16, number(x));
  }
  for (double y = 0; y <= ymax + 1e-9 * ymax; y += ys) {
    svg += fmt::format(
        "<line x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{2:.2f}\" y2=\"{1:.2f}\" stroke=\"#e5e5e5\"/>\n"
        "<text x=\"{3:.2f}\" y=\"{4:.2f}\" text-anchor=\"end\">{5}</text>\n",
        left, sy(y), left + pw, left - 6, sy(y) + 4, number(y));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">problem size x (computation units)</text>\n"
      "<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">speed x / t(x) "
      "(units per second)</text>\n",
      left, top, pw, ph, left + pw / 2, h - 12, top + ph / 2);

  for (std::size_t i = 0; i < models.size(); ++i) {
    const char* color = palette[i % palette.size()];
    if (!curves[i].empty()) {
      std::string path;
      for (const auto& [x, s] : curves[i]) {
        path += fmt::format("{}{:.2f},{:.2f}", path.empty() ? "M" : " L", sx(x), sy(s));
      }
      svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path,
                         color);
    }
    for (const Point& p : models[i].points()) {
      const double x = static_cast<double>(p.d);
      svg += fmt::format(
          "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"3.5\" fill=\"white\" stroke=\"{}\" "
          "stroke-width=\"1.5\"><title>d = {}, t = {:.6g} s</title></circle>\n",
          sx(x), sy(x / p.t), color, p.d, p.t);
    }
    const std::string label =
        i < options.labels.size() ? options.labels[i] : fmt::format("device {}", i);
    const double ly = top + 16 + 18 * static_cast<double>(i);
    svg += fmt::format(
        "<line x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{2:.2f}\" y2=\"{1:.2f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"/>\n<text x=\"{4:.2f}\" y=\"{5:.2f}\">{6}</text>\n",
        left + 10, ly, left + 34, color, left + 40, ly + 4, xml_escape(label));
  }

  if (dist && dist->makespan > 0 && std::isfinite(dist->makespan)) {
    // The line through the origin with slope 1/T meets every balanced device's speed graph at its
    // share: speed d/T at size d.
    const double T = dist->makespan;
    const double x_end = std::min(xmax, ymax * T);
    svg += fmt::format(
        "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"black\" "
        "stroke-dasharray=\"6 4\"/>\n"
        "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">{} of n = {}: T = {:.4g} s</text>\n",
        sx(0), sy(0), sx(x_end), sy(x_end / T), left + pw - 8, top + 16,
        xml_escape(dist->algorithm), dist->n, T);
    for (std::size_t i = 0; i < dist->parts.size() && i < models.size(); ++i) {
      const Part& part = dist->parts[i];
      if (part.d <= 0 || !(part.t > 0)) continue;
      const double x = static_cast<double>(part.d);
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"8\" height=\"8\" fill=\"{}\" stroke=\"black\">"
          "<title>device {}: d = {}, t = {:.6g} s</title></rect>\n",
          sx(x) - 4, sy(x / part.t) - 4, palette[i % palette.size()], i, part.d, part.t);
    }
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hit::fpm
