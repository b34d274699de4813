// Speed-function pictures: one curve per model, its points, and the partition line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hit/fpm/partition.hpp"
#include "hit/fpm/plot.hpp"

namespace hit::fpm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(Plot, CurvesPointsAndPartitionLine) {
  const std::vector<Model> models = {
      Model({{10, 1.0, 1, 0}, {50, 4.0, 1, 0}, {90, 9.0, 1, 0}}),
      Model({{20, 0.5, 1, 0}, {80, 3.0, 1, 0}}, ModelKind::piecewise, 80)};
  PlotOptions options;
  options.labels = {"a<1>.csv", "b.csv"};
  const std::string plain = speed_plot_svg(models, std::nullopt, options);
  EXPECT_EQ(plain.rfind("<svg", 0), 0u);
  EXPECT_THAT(plain, HasSubstr("</svg>"));
  EXPECT_EQ(count(plain, "<path "), 2);
  EXPECT_EQ(count(plain, "<circle "), 5);
  EXPECT_THAT(plain, HasSubstr("a&lt;1&gt;.csv"));
  EXPECT_THAT(plain, Not(HasSubstr("stroke-dasharray")));

  const Distribution d = partition_geometric(models, 100);
  const std::string with = speed_plot_svg(models, d, options);
  EXPECT_EQ(count(with, "stroke-dasharray"), 1);
  EXPECT_EQ(count(with, "<rect x="), 1 + 2);  // the frame and one marker per device with work
  EXPECT_THAT(with, HasSubstr("n = 100"));
}

}  // namespace
}  // namespace hit::fpm
