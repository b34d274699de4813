// The `fpm` layout plug-in: part sizes from model files through a partitioner, predicted times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/layout.hpp"

namespace hit::detail {
void register_fpm_layout(LayoutRegistry& registry);
}

namespace hit::fpm {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class FpmLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& registry = Environment::current().extension<LayoutRegistry>();
    if (!registry.contains("fpm")) detail::register_fpm_layout(registry);
    dir_ = std::filesystem::temp_directory_path() /
           ("hit-fpm-layout-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    models_ = {Model({{10, 1.0, 1, 0}, {100, 12.0, 1, 0}}),
               Model({{10, 0.25, 1, 0}, {100, 2.0, 1, 0}}),
               Model({{20, 0.5, 1, 0}, {60, 1.5, 1, 0}}, ModelKind::piecewise, 60)};
    for (std::size_t i = 0; i < models_.size(); ++i) save_model(file(i), models_[i]);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(std::size_t i) const {
    return (dir_ / ("m" + std::to_string(i) + ".csv")).string();
  }
  std::string files(std::initializer_list<std::size_t> which) const {
    std::string out;
    for (std::size_t i : which) out += (out.empty() ? "" : ",") + file(i);
    return out;
  }

  std::filesystem::path dir_;
  std::vector<Model> models_;
};

TEST_F(FpmLayout, PartsAndPredictedTimesComeFromThePartitioner) {
  const Shape shape = Shape::parse("[0:200][0:8]");
  const Layout l =
      layout("fpm:models=" + files({0, 1, 2}) + ",algorithm=exact", topology("array", 3), shape);
  const Distribution d = partition_exact(models_, 200);
  index_t begin = 0;
  for (int p = 0; p < 3; ++p) {
    const index_t rows = d.parts[static_cast<std::size_t>(p)].d;
    EXPECT_EQ(
        l.block(p),
        Shape::parse(
            ("[" + std::to_string(begin) + ":" + std::to_string(begin + rows) + "][0:8]").c_str()));
    begin += rows;
    ASSERT_TRUE(l.predicted_time(p).has_value());
    EXPECT_DOUBLE_EQ(*l.predicted_time(p), d.parts[static_cast<std::size_t>(p)].t);
  }
  EXPECT_LE(l.elements(2), 60 * 8);  // the capacity of device 2
  EXPECT_EQ(l.owner(Index{199, 7}), 2);
}

TEST_F(FpmLayout, SplitsTheChosenAxisOfAMesh) {
  const Layout l = layout("fpm:models=" + files({0, 1}) + ",axis=1", topology("mesh:dims=2x2", 4),
                          Shape::parse("[0:6][0:50]"));
  const Distribution d = partition_geometric(std::vector<Model>{models_[0], models_[1]}, 50);
  for (int p = 0; p < 4; ++p) {
    const auto c = static_cast<std::size_t>(topology("mesh:dims=2x2", 4).coords(p)[1]);
    EXPECT_EQ(l.block(p).extent(1), d.parts[c].d) << p;
    EXPECT_EQ(l.block(p).extent(0), 3) << p;
  }
}

TEST_F(FpmLayout, ModelsFromTheDevices) {
  std::vector<DeviceBinding> devices(2);
  devices[0].params["model"] = file(1);
  devices[1].params["model"] = file(0);
  const Layout l =
      layout("fpm", topology("array", 2), Shape::parse("[0:100]"), {.devices = devices});
  const Distribution d = partition_geometric(std::vector<Model>{models_[1], models_[0]}, 100);
  EXPECT_EQ(l.elements(0), d.parts[0].d);
  EXPECT_EQ(l.elements(1), d.parts[1].d);
}

TEST_F(FpmLayout, ProcessWithoutWorkIsInactive) {
  // Two units: both go to the device with the smallest t(1) (device 1 then device 2).
  const Layout l =
      layout("fpm:models=" + files({0, 1, 2}), topology("array", 3), Shape::parse("[0:2]"));
  EXPECT_FALSE(l.active(0));
  EXPECT_EQ(l.elements(1) + l.elements(2), 2);
}

TEST_F(FpmLayout, ErrorsNameTheLayoutAndWhatIsWrong) {
  auto message = [&](const std::string& spec, const char* shape = "[0:100]") {
    try {
      (void)layout(spec, topology("array", 3), Shape::parse(shape));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // The devices' "model" entries are the alternative only code has (--devices has no such key).
  EXPECT_THAT(message("fpm"),
              AllOf(HasSubstr("needs models=FILE"), HasSubstr("which only code can set")));
  EXPECT_THAT(message("fpm:models=" + files({0, 1})),
              AllOf(HasSubstr("2 model files for the 3 coordinates")));
  EXPECT_THAT(message("fpm:models=" + files({0, 1}) + "," + (dir_ / "nope.csv").string()),
              AllOf(HasSubstr("layout 'fpm"), HasSubstr("nope.csv")));
  EXPECT_THAT(message("fpm:models=" + files({0, 1, 2}) + ",algorithm=fastest"),
              HasSubstr("unknown fpm partitioner"));
  EXPECT_THAT(message("fpm:models=" + files({0, 1, 2}) + ",axis=1"), HasSubstr("axis=1"));
  // Device 2 holds 60 rows at most; the others have no limit, so 10^6 rows still fit.
  EXPECT_EQ(message("fpm:models=" + files({0, 1, 2}), "[0:1000000]"), "no error");
}

}  // namespace
}  // namespace hit::fpm
