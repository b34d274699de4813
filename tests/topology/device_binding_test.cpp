// The `--devices` grammar: parsing, counts, canonical text, typed parameters and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "hit/core/error.hpp"
#include "hit/topology/device_binding.hpp"
#include "hit/topology/device_kind.hpp"
#include "hit/topology/device_params.hpp"

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

hit::Error error_of(const std::string& spec, int procs) {
  try {
    (void)hit::parse_device_spec(spec, procs);
  } catch (const hit::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for '" << spec << "' with " << procs << " processes";
  return hit::Error(hit::ErrorKind::internal, "");
}

}  // namespace

// One enum names the kinds everywhere; its text is what specs, labels and JSON spell.
TEST(DeviceKind, NamesRoundTripAndUnknownNamesAreErrors) {
  static_assert(hit::parse_device_kind("emu") == hit::DeviceKind::emu);
  ASSERT_EQ(hit::device_kinds().size(), 3u);
  for (const hit::DeviceKind kind : hit::device_kinds()) {
    EXPECT_EQ(hit::parse_device_kind(hit::to_string(kind)), kind);
    EXPECT_EQ(hit::device_kind(hit::to_string(kind)), kind);
  }
  EXPECT_EQ(hit::to_string(hit::DeviceKind::cpu), "cpu");
  EXPECT_EQ(hit::to_string(hit::DeviceKind::cuda), "cuda");
  EXPECT_EQ(hit::to_string(hit::DeviceKind::emu), "emu");
  EXPECT_FALSE(hit::parse_device_kind("gpu").has_value());
  EXPECT_FALSE(hit::parse_device_kind("CPU").has_value());  // exact names only, as in specs
  std::ostringstream text;
  text << hit::DeviceKind::cuda;
  EXPECT_EQ(text.str(), "cuda");
  try {
    (void)hit::device_kind("gpu");
    ADD_FAILURE() << "no error for 'gpu'";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device);
    EXPECT_THAT(e.what(), HasSubstr("unknown device kind 'gpu' (known kinds: cpu, cuda, emu)"));
  }
  // The parameters each kind accepts follow the kind, not its spelling.
  const auto& emu = hit::device_params(hit::DeviceKind::emu);
  EXPECT_TRUE(std::any_of(emu.begin(), emu.end(), [](const auto& p) { return p.key == "mem"; }));
  const auto& cpu = hit::device_params(hit::DeviceKind::cpu);
  EXPECT_TRUE(std::none_of(cpu.begin(), cpu.end(), [](const auto& p) { return p.key == "mem"; }));
}

TEST(DeviceSpec, PaperScenarioA3B1) {
  const auto b = hit::parse_device_spec("cuda:0*3,cuda:1", 4);
  ASSERT_EQ(b.size(), 4u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(b[r].kind, hit::DeviceKind::cuda);
    EXPECT_EQ(b[r].index, 0);
  }
  EXPECT_EQ(b[3].index, 1);
  EXPECT_EQ(hit::format_device_spec(b), "cuda:0*3,cuda:1");
}

TEST(DeviceSpec, IndexLeftOutIsAny) {
  const auto b = hit::parse_device_spec("cpu*4", 4);
  ASSERT_EQ(b.size(), 4u);
  for (const auto& d : b) {
    EXPECT_EQ(d.kind, hit::DeviceKind::cpu);
    EXPECT_EQ(d.index, hit::DeviceBinding::any_index);
    EXPECT_EQ(d.str(), "cpu");
  }
}

TEST(DeviceSpec, EmulatedWithParametersAndMixedKinds) {
  const auto b = hit::parse_device_spec(" emu:0( slowdown=4, mem=512MiB )*2 , cpu*2 ", 4);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].kind, hit::DeviceKind::emu);
  EXPECT_EQ(b[0].index, 0);
  EXPECT_EQ(b[0].params.at("mem"), "512MiB");
  EXPECT_EQ(b[0].params.at("slowdown"), "4");
  EXPECT_EQ(b[0], b[1]);
  EXPECT_EQ(b[2].kind, hit::DeviceKind::cpu);
  // Keys in canonical (sorted) order, whatever order they were given in.
  EXPECT_EQ(b[0].str(), "emu:0(mem=512MiB,slowdown=4)");
  EXPECT_EQ(hit::format_device_spec(b), "emu:0(mem=512MiB,slowdown=4)*2,cpu*2");
}

TEST(DeviceSpec, SingleItemWithoutCountBindsEveryRank) {
  for (int procs = 1; procs <= 9; ++procs) {
    const auto b = hit::parse_device_spec("cuda:1", procs);
    ASSERT_EQ(static_cast<int>(b.size()), procs);
    for (const auto& d : b) EXPECT_EQ(d.str(), "cuda:1");
  }
}

TEST(DeviceSpec, CountsMustMatchProcs) {
  EXPECT_NO_THROW(hit::parse_device_spec("cuda:0*2,cpu", 3));
  for (auto [spec, procs, bound] :
       {std::tuple{"cuda:0*3,cuda:1", 3, 4}, std::tuple{"cuda:0*3,cuda:1", 5, 4},
        std::tuple{"cpu*2", 4, 2}, std::tuple{"cpu*1", 2, 1}, std::tuple{"cpu,cuda", 1, 2}}) {
    const auto e = error_of(spec, procs);
    EXPECT_EQ(e.kind(), hit::ErrorKind::device) << spec;
    EXPECT_THAT(e.what(), AllOf(HasSubstr(spec), HasSubstr("binds " + std::to_string(bound)),
                                HasSubstr("has " + std::to_string(procs)), HasSubstr("grammar")));
  }
}

TEST(DeviceSpec, CanonicalTextRoundTripsOverRandomSpecs) {
  // Random specs built from parts with known canonical text: parse(text) must give that text back,
  // and parsing the canonical text again must give equal bindings.
  std::mt19937 rng(7);
  const std::vector<std::pair<std::string, std::string>> emu_params = {
      {"mem=64MiB", "mem=64MiB"},
      {"mem=0.5GiB", "mem=512MiB"},
      {"mem=1048576", "mem=1MiB"},
      {"mem=3000B", "mem=3KB"},
      {"mem=1234", "mem=1234B"},
      {"bw=10GB/s", "bw=10GB/s"},
      {"bw=1024MiB/s", "bw=1GiB/s"},
      {"bw=2.5GB/s", "bw=2500MB/s"},
      {"slowdown=4", "slowdown=4"},
      {"slowdown=1.5", "slowdown=1.5"},
      {"slowdown=1;6@256MiB", "slowdown=1;6@256MiB"},
      {"cores=2", "cores=2"}};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    std::vector<std::string> expected_items;
    int procs = 0;
    const int items = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < items; ++i) {
      const std::string kind = std::vector<std::string>{"cpu", "cuda", "emu"}[rng() % 3];
      std::string item = kind;
      std::string canon = kind;
      if (rng() % 2 != 0) {
        const auto idx = std::to_string(rng() % 4);
        item += ":" + idx;
        canon += ":" + idx;
      }
      if (kind == "emu" && rng() % 2 != 0) {
        std::map<std::string, std::string> chosen;  // key -> canonical key=value
        std::vector<std::string> given;
        for (int k = 0; k < 3; ++k) {
          const auto& p = emu_params[rng() % emu_params.size()];
          const std::string key = p.first.substr(0, p.first.find('='));
          if (chosen.count(key) != 0) continue;
          chosen[key] = p.second;
          given.push_back(p.first);
        }
        item += "(";
        for (std::size_t k = 0; k < given.size(); ++k) item += (k ? "," : "") + given[k];
        item += ")";
        canon += "(";
        bool first = true;
        for (const auto& [key, kv] : chosen) {
          canon += (first ? "" : ",") + kv;
          first = false;
        }
        canon += ")";
      }
      const int count = 1 + static_cast<int>(rng() % 3);
      item += "*" + std::to_string(count);
      procs += count;
      text += (i ? "," : "") + item;
      for (int c = 0; c < count; ++c) expected_items.push_back(canon);
    }
    const auto b = hit::parse_device_spec(text, procs);
    ASSERT_EQ(b.size(), expected_items.size()) << text;
    for (std::size_t r = 0; r < b.size(); ++r) EXPECT_EQ(b[r].str(), expected_items[r]) << text;
    const auto again = hit::parse_device_spec(hit::format_device_spec(b), procs);
    EXPECT_EQ(again, b) << text << " -> " << hit::format_device_spec(b);
  }
}

TEST(DeviceSpec, SyntaxErrorsShowTheGrammar) {
  for (const std::string spec :
       {"",        "   ",           "cuda:",    "cuda:x",  "cuda:-1", "cuda*0",   "cuda*",
        "cuda*-2", "emu(mem=1GiB",  "emu(mem)", "emu(=3)", "emu()",   "cpu,,cpu", "cpu,",
        ",cpu",    "cuda:0 cuda:1", "cpu#",     "cpu*2x",  "4*cpu",   "cuda:0:1"}) {
    const auto e = error_of(spec, 2);
    EXPECT_EQ(e.kind(), hit::ErrorKind::parse) << "'" << spec << "': " << e.what();
    EXPECT_THAT(e.what(), AllOf(HasSubstr("malformed device spec '" + spec + "'"),
                                HasSubstr(std::string(hit::device_spec_grammar()))));
  }
}

TEST(DeviceSpec, UnknownKindListsTheKnownOnes) {
  for (const std::string kind : {"gpu", "CUDA", "opencl", "tpu"}) {
    const auto e = error_of(kind + ":0*2", 2);
    EXPECT_EQ(e.kind(), hit::ErrorKind::device);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("unknown device kind '" + kind + "'"),
                                HasSubstr("cpu, cuda, emu"), HasSubstr("grammar")));
  }
}

TEST(DeviceSpec, UnknownOrRepeatedParameter) {
  auto e = error_of("cpu(mem=1GiB)", 1);
  EXPECT_THAT(e.what(),
              AllOf(HasSubstr("'cpu' has no parameter 'mem'"), HasSubstr("allowed: cores")));
  e = error_of("emu(speed=2)", 1);
  EXPECT_THAT(e.what(),
              AllOf(HasSubstr("no parameter 'speed'"),
                    HasSubstr("allowed: mem, bw, slowdown, change, clock, fail, stall, cores")));
  e = error_of("emu(mem=1GiB,mem=2GiB)", 1);
  EXPECT_THAT(e.what(), HasSubstr("'mem' given twice"));
}

TEST(DeviceSpec, InjectedFailureIsALaunchCount) {
  const auto b = hit::parse_device_spec("emu:0(fail=007)", 1);
  EXPECT_EQ(b[0].str(), "emu:0(fail=7)");
  EXPECT_EQ(hit::DeviceParams::of(b[0]).fail_after, std::uint64_t{7});
  EXPECT_FALSE(hit::DeviceParams::of(hit::parse_device_spec("emu:0", 1)[0]).fail_after);
  EXPECT_THAT(error_of("cpu(fail=1)", 1).what(), HasSubstr("'cpu' has no parameter 'fail'"));
}

TEST(DeviceSpec, InjectedStallIsOneLaunch) {
  const auto b = hit::parse_device_spec("emu:0(stall=03)", 1);
  EXPECT_EQ(b[0].str(), "emu:0(stall=3)");
  EXPECT_EQ(hit::DeviceParams::of(b[0]).stall_at, std::uint64_t{3});
  EXPECT_FALSE(hit::DeviceParams::of(hit::parse_device_spec("emu:0", 1)[0]).stall_at);
  EXPECT_THAT(error_of("emu(stall=soon)", 1).what(), HasSubstr("stall=soon is not a launch count"));
  EXPECT_THAT(error_of("cuda(stall=1)", 1).what(), HasSubstr("'cuda' has no parameter 'stall'"));
}

TEST(DeviceSpec, UnparsableValuesNameTheValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"emu(mem=lots)", "mem=lots is not valid"},
      {"emu(clock=cycles)", "clock=cycles is not valid"},
      {"emu(mem=64XB)", "mem=64XB is not valid"},
      {"emu(mem=-1MiB)", "mem=-1MiB is not valid"},
      {"emu(mem=0)", "a capacity must be positive"},
      {"emu(slowdown=fast)", "slowdown=fast is not valid"},
      {"emu(slowdown=0.5)", "below 1"},
      {"emu(slowdown=2;4)", "needs @size"},
      {"emu(slowdown=2;4@1GiB;8@1MiB)", "increase strictly"},
      {"emu(slowdown=2;4@big)", "'big' is not a byte size"},
      {"emu(bw=fast)", "bw=fast is not valid"},
      {"emu(bw=0GB/s)", "bw=0GB/s is not valid"},
      {"emu(bw=10GB/h)", "bw=10GB/h is not valid"},
      {"cpu(cores=0)", "cores=0 is not valid"},
      {"cpu(cores=two)", "cores=two is not valid"},
      {"emu(fail=soon)", "fail=soon is not valid"},
      {"emu(fail=-1)", "fail=-1 is not valid"},
      {"emu(fail=3x)", "fail=3x is not valid"},
  };
  for (const auto& [spec, what] : cases) {
    const auto e = error_of(spec, 1);
    EXPECT_EQ(e.kind(), hit::ErrorKind::parse) << spec;
    EXPECT_THAT(e.what(), AllOf(HasSubstr(what), HasSubstr(spec))) << spec;
  }
  // The allowed units are named for byte sizes.
  EXPECT_THAT(error_of("emu(mem=64XB)", 1).what(), HasSubstr("KiB, MiB, GiB"));
}

TEST(DeviceUnits, BytesInEveryUnit) {
  EXPECT_EQ(hit::parse_bytes("0"), 0u);
  EXPECT_EQ(hit::parse_bytes("17"), 17u);
  EXPECT_EQ(hit::parse_bytes("17B"), 17u);
  EXPECT_EQ(hit::parse_bytes("1KB"), 1000u);
  EXPECT_EQ(hit::parse_bytes("1kib"), 1024u);
  EXPECT_EQ(hit::parse_bytes("64MiB"), 64ull << 20);
  EXPECT_EQ(hit::parse_bytes("64 MB"), 64000000u);
  EXPECT_EQ(hit::parse_bytes("1.5GiB"), 3ull << 29);
  EXPECT_EQ(hit::parse_bytes("2TB"), 2000000000000ull);
  EXPECT_EQ(hit::parse_bytes("1TiB"), 1ull << 40);
  for (const char* bad : {"", "MiB", "1..2MiB", "1e3", "1.2.3", "1Mi", "1PiB", "x"}) {
    EXPECT_THROW((void)hit::parse_bytes(bad), hit::Error) << bad;
  }
}

TEST(DeviceUnits, FormatBytesIsExactAndRoundTrips) {
  EXPECT_EQ(hit::format_bytes(0), "0B");
  EXPECT_EQ(hit::format_bytes(512), "512B");
  EXPECT_EQ(hit::format_bytes(2048), "2KiB");
  EXPECT_EQ(hit::format_bytes(64ull << 20), "64MiB");
  EXPECT_EQ(hit::format_bytes(5000000), "5MB");
  EXPECT_EQ(hit::format_bytes(1ull << 40), "1TiB");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t b = (rng() >> (rng() % 60)) * ((i % 3 == 0) ? 1024 : 1);
    EXPECT_EQ(hit::parse_bytes(hit::format_bytes(b)), b) << b;
  }
}

TEST(DeviceUnits, Bandwidth) {
  EXPECT_DOUBLE_EQ(hit::parse_bandwidth("10GB/s"), 10e9);
  EXPECT_DOUBLE_EQ(hit::parse_bandwidth("10GB"), 10e9);
  EXPECT_DOUBLE_EQ(hit::parse_bandwidth("512MiB/s"), 512.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(hit::parse_bandwidth("1.5 KB/s"), 1500.0);
  EXPECT_DOUBLE_EQ(hit::parse_bandwidth("100"), 100.0);
  EXPECT_EQ(hit::format_bandwidth(10e9), "10GB/s");
  EXPECT_EQ(hit::format_bandwidth(1024.0 * 1024 * 1024), "1GiB/s");
  EXPECT_THROW((void)hit::parse_bandwidth("0/s"), hit::Error);
  EXPECT_THROW((void)hit::parse_bandwidth("fast"), hit::Error);
}

TEST(DeviceUnits, SlowdownProfileIsAStepFunction) {
  const auto p = hit::SlowdownProfile::parse("1.5;6@256MiB;10@1GiB");
  ASSERT_EQ(p.steps().size(), 3u);
  EXPECT_DOUBLE_EQ(p.at(0), 1.5);
  EXPECT_DOUBLE_EQ(p.at((256ull << 20) - 1), 1.5);
  EXPECT_DOUBLE_EQ(p.at(256ull << 20), 6.0);
  EXPECT_DOUBLE_EQ(p.at((1ull << 30) - 1), 6.0);
  EXPECT_DOUBLE_EQ(p.at(1ull << 30), 10.0);
  EXPECT_DOUBLE_EQ(p.at(1ull << 40), 10.0);
  EXPECT_EQ(p.str(), "1.5;6@256MiB;10@1GiB");
  EXPECT_FALSE(p.is_constant());

  const auto constant = hit::SlowdownProfile::parse("4");
  EXPECT_TRUE(constant.is_constant());
  EXPECT_DOUBLE_EQ(constant.at(123456789), 4.0);
  // A profile starting at a size is 1 below it.
  const auto cliff = hit::SlowdownProfile::parse("8@1MiB");
  EXPECT_DOUBLE_EQ(cliff.at(1000), 1.0);
  EXPECT_DOUBLE_EQ(cliff.at(1 << 20), 8.0);
  EXPECT_EQ(cliff.str(), "1;8@1MiB");
  EXPECT_DOUBLE_EQ(hit::SlowdownProfile().at(99), 1.0);
  EXPECT_THROW(hit::SlowdownProfile(0.5), hit::Error);
}

TEST(DeviceUnits, SpeedChangeByLaunchesOrSeconds) {
  const auto launches = hit::SpeedChange::parse("4@100;1@300");
  EXPECT_FALSE(launches.in_seconds());
  EXPECT_DOUBLE_EQ(launches.factor(99, 1e9), 1.0);
  EXPECT_DOUBLE_EQ(launches.factor(100, 0), 4.0);
  EXPECT_DOUBLE_EQ(launches.factor(299, 0), 4.0);
  EXPECT_DOUBLE_EQ(launches.factor(300, 0), 1.0);
  EXPECT_EQ(launches.str(), "4@100;1@300");
  const auto seconds = hit::SpeedChange::parse("0.5@1.5s");
  EXPECT_TRUE(seconds.in_seconds());
  EXPECT_DOUBLE_EQ(seconds.factor(1000000, 1.4), 1.0);
  EXPECT_DOUBLE_EQ(seconds.factor(0, 1.5), 0.5);
  EXPECT_EQ(seconds.str(), "0.5@1.5s");
  EXPECT_TRUE(hit::SpeedChange().empty());
  const auto why = [](const char* text) {
    try {
      (void)hit::SpeedChange::parse(text);
    } catch (const hit::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(why("4"), HasSubstr("'4' has no @"));
  EXPECT_THAT(why("0@10"), HasSubstr("'0' is not a positive number"));
  EXPECT_THAT(why("2@1.5"), HasSubstr("not a whole launch count"));
  EXPECT_THAT(why("2@10;3@5s"), HasSubstr("launch counts and times are mixed"));
  EXPECT_THAT(why("2@10;3@10"), HasSubstr("must increase strictly"));
  EXPECT_THAT(why("2@soon"), HasSubstr("not a launch count or a time"));
  // Through the binding: canonical text, and refused as a value.
  EXPECT_EQ(hit::DeviceParams::of(hit::parse_device_spec("emu(change=4@100)", 1).front()).change,
            launches.parse("4@100"));
  EXPECT_THROW(hit::parse_device_spec("emu(change=fast)", 1), hit::Error);
}

TEST(DeviceUnits, TypedParametersOfABinding) {
  const auto b = hit::parse_device_spec("emu:1(mem=64MiB,bw=2GB/s,slowdown=3,cores=2)", 1).front();
  const auto p = hit::DeviceParams::of(b);
  ASSERT_TRUE(p.mem.has_value());
  EXPECT_EQ(*p.mem, 64ull << 20);
  ASSERT_TRUE(p.bw.has_value());
  EXPECT_DOUBLE_EQ(*p.bw, 2e9);
  EXPECT_DOUBLE_EQ(p.slowdown.at(0), 3.0);
  ASSERT_TRUE(p.cores.has_value());
  EXPECT_EQ(*p.cores, 2);
  const auto plain = hit::DeviceParams::of(hit::parse_device_spec("cpu", 1).front());
  EXPECT_FALSE(plain.mem.has_value());
  EXPECT_FALSE(plain.bw.has_value());
  EXPECT_FALSE(plain.cores.has_value());
}
