// Model files (docs/fpm.md): round trips and every kind of bad input, named by file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "hit/core/error.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"

namespace hit::fpm {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(std::string_view text, std::string_view name = "dev0.csv") {
  try {
    parse_model(text, name);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::model) << e.what();
    return e.what();
  }
  return "no error";
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hit-fpm-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

using ModelFile = TempDir;

TEST_F(ModelFile, RoundTripKeepsEveryBit) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(1e-7, 10);
  for (int trial = 0; trial < 20; ++trial) {
    Model m(ModelKind::piecewise, trial % 2 ? unlimited : 1000 + trial);
    std::int64_t d = 0;
    for (int k = 0; k < 1 + trial % 7; ++k) {
      d += 1 + trial * 7 + k;
      m.add(Point{d, u(rng), 1 + k, u(rng) / 100});
    }
    m.set_info("kernel", "gemm(b=64)");
    m.set_info("device", "cuda:0 (rank 1 of 4, host node7)");
    save_model(path("m.csv"), m);
    const Model back = load_model(path("m.csv"), ModelKind::akima);
    EXPECT_EQ(back.points(), m.points());
    EXPECT_EQ(back.capacity(), m.capacity());
    EXPECT_EQ(back.info(), m.info());
    EXPECT_EQ(back.kind(), ModelKind::akima);
  }
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(ModelFile, ReadsCommentsOptionalColumnsAndCapacity) {
  const Model m = parse_model(
      "# device: emu:0\n# measured on a quiet machine\n\n#capacity: 500\nt,d,ci\n"
      "0.5,10,0.01\r\n1.5,20,0.02\n",
      "x.csv");
  ASSERT_EQ(m.points().size(), 2u);
  EXPECT_EQ(m.points()[1], (Point{20, 1.5, 1, 0.02}));
  EXPECT_EQ(m.capacity(), 500);
  EXPECT_EQ(m.info().at("device"), "emu:0");
  EXPECT_EQ(m.info().count("measured on a quiet machine"), 0u);
}

// `# capacity: 0` with no points is a device that takes nothing: read (with or without a header),
// written back the same, and given 0 units by every partitioner. Any other capacity still needs
// points.
TEST_F(ModelFile, CapacityZeroNeedsNoPoints) {
  for (const std::string text : {"# capacity: 0\n", "# device: broken\n# capacity: 0\nd,t\n"}) {
    const Model m = parse_model(text, "dead.csv");
    EXPECT_TRUE(m.empty()) << text;
    EXPECT_EQ(m.capacity(), 0) << text;
  }
  const Model dead = parse_model("# device: broken\n# capacity: 0\n", "dead.csv");
  EXPECT_EQ(dead.info().at("device"), "broken");
  save_model(path("dead.csv"), dead);
  const Model back = load_model(path("dead.csv"));
  EXPECT_TRUE(back.empty());
  EXPECT_EQ(back.capacity(), 0);
  const std::vector<Model> models = {parse_model("d,t\n10,1\n20,2\n", "a.csv"), back,
                                     parse_model("d,t\n10,2\n20,4\n", "b.csv")};
  for (const std::string algo : {"even", "proportional", "geometric", "numerical", "exact", "dp"}) {
    const Distribution d = partition(algo, models, 30);
    EXPECT_EQ(d.parts[1].d, 0) << algo;
    EXPECT_EQ(d.parts[1].t, 0) << algo;
    EXPECT_EQ(d.parts[0].d + d.parts[2].d, 30) << algo;
  }
  EXPECT_THAT(error_of("# capacity: 5\n"), HasSubstr("no points"));
  EXPECT_THAT(error_of("# capacity: 0\nd,t\n3,1\n"), HasSubstr("beyond the declared capacity"));
}

TEST_F(ModelFile, BadInputNamesFileAndLine) {
  EXPECT_THAT(error_of(""), AllOf(HasSubstr("dev0.csv"), HasSubstr("empty")));
  EXPECT_THAT(error_of("# only a comment\n"), HasSubstr("empty"));
  EXPECT_THAT(error_of("d,t\n"), HasSubstr("no points after the header"));
  EXPECT_THAT(error_of("d,t\n10,abc\n"),
              AllOf(HasSubstr("dev0.csv"), HasSubstr("line 2"), HasSubstr("'abc'")));
  EXPECT_THAT(error_of("d,t\n1.5,1\n"), AllOf(HasSubstr("line 2"), HasSubstr("whole number")));
  EXPECT_THAT(error_of("d,t\n10,1\n5,2\n"), AllOf(HasSubstr("line 3"), HasSubstr("sorted")));
  EXPECT_THAT(error_of("d,t\n10,1\n10,2\n"), AllOf(HasSubstr("line 3"), HasSubstr("repeats")));
  EXPECT_THAT(error_of("d,t\n10,0\n"), AllOf(HasSubstr("line 2"), HasSubstr("> 0")));
  EXPECT_THAT(error_of("d,t\n10,-2\n"), AllOf(HasSubstr("line 2"), HasSubstr("> 0")));
  EXPECT_THAT(error_of("d,t\n10,inf\n"), HasSubstr("line 2"));
  EXPECT_THAT(error_of("d,t\n0,1\n"), AllOf(HasSubstr("line 2"), HasSubstr(">= 1")));
  EXPECT_THAT(error_of("d,t\n10\n"), AllOf(HasSubstr("line 2"), HasSubstr("1 fields")));
  EXPECT_THAT(error_of("10,1\n"), AllOf(HasSubstr("line 1"), HasSubstr("header")));
  EXPECT_THAT(error_of("d,time\n"), AllOf(HasSubstr("line 1"), HasSubstr("unknown column")));
  EXPECT_THAT(error_of("# capacity: lots\nd,t\n1,1\n"),
              AllOf(HasSubstr("line 1"), HasSubstr("malformed capacity")));
  EXPECT_THAT(error_of("# capacity: -4\nd,t\n1,1\n"), HasSubstr("malformed capacity"));
  EXPECT_THAT(error_of("d,t\n1,1\n# capacity 7\n"),
              AllOf(HasSubstr("line 3"), HasSubstr("malformed capacity")));
  EXPECT_THAT(error_of("# capacity: 5\n# capacity: 6\nd,t\n1,1\n"),
              AllOf(HasSubstr("line 2"), HasSubstr("second capacity")));
  EXPECT_THAT(error_of("d,t\n4,1\n9,2\n# capacity: 8\n"),
              AllOf(HasSubstr("line 3"), HasSubstr("beyond the declared capacity")));
  EXPECT_THAT(error_of("d,t,reps\n4,1,-1\n"), AllOf(HasSubstr("line 2"), HasSubstr("reps")));
}

TEST_F(ModelFile, UnreadableAndUnwritableFilesAreIoErrors) {
  try {
    load_model(path("missing.csv"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr("missing.csv"));
  }
  try {
    save_model(path("no/such/dir/m.csv"), Model({{1, 1.0, 1, 0}}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_THAT(e.what(), HasSubstr("m.csv"));
  }
}

}  // namespace
}  // namespace hit::fpm
