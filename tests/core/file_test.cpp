// Output files: an existing file its user made read-only is never replaced, whoever runs the
// program (root included, whom access() lets write anything); writable files are.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "hit/core/error.hpp"
#include "hit/core/file.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hit_file_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static void write(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  fs::path dir_;
};

TEST_F(OutputFile, ReadOnlyFileIsKeptWithOneClearError) {
  const std::string kept = path("kept.raw");
  write(kept, "old");
  ASSERT_EQ(::chmod(kept.c_str(), 0444), 0);
  try {
    hit::check_output_path(kept, "C (--c-out)");
    FAIL() << "a read-only output file was accepted";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::io);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("cannot write C (--c-out) '" + kept + "'"),
                                HasSubstr("read-only")));
  }
  try {
    hit::write_file_atomically(kept, "new");
    FAIL() << "a read-only file was replaced";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::io);
    EXPECT_THAT(e.what(), AllOf(HasSubstr(kept), HasSubstr("read-only")));
  }
  EXPECT_EQ(read(kept), "old");
  // Nothing left beside it (no temporary).
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
  // Owner-writable again: replaced.
  ASSERT_EQ(::chmod(kept.c_str(), 0644), 0);
  EXPECT_NO_THROW(hit::check_output_path(kept, "C (--c-out)"));
  hit::write_file_atomically(kept, "new");
  EXPECT_EQ(read(kept), "new");
  // A file that does not exist yet is not read-only.
  EXPECT_NO_THROW(hit::check_not_read_only(path("new.raw")));
}

}  // namespace
