// Core: plug-in spec strings, the registry, configuration, errors, logging.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "hit/core/config.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/log.hpp"
#include "hit/core/registry.hpp"
#include "hit/core/spec.hpp"
#include "hit/core/wait_policy.hpp"

// The library's private fmt overloads of the log functions, beside the public text ones.
#include "core/log_format.hpp"

namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const hit::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Spec, NameOnly) {
  const auto s = hit::Spec::parse("blocks");
  EXPECT_EQ(s.name(), "blocks");
  EXPECT_TRUE(s.params().empty());
  EXPECT_EQ(s.str(), "blocks");
}

TEST(Spec, KeysValuesAndLists) {
  const auto s = hit::Spec::parse(" weighted : w=1,2.5,4 , axis=1 ");
  EXPECT_EQ(s.name(), "weighted");
  ASSERT_EQ(s.params().size(), 2u);
  EXPECT_EQ(s.get_doubles("w"), (std::vector<double>{1, 2.5, 4}));
  EXPECT_EQ(s.get_int("axis", 0), 1);
  EXPECT_EQ(s.get_int("missing", 42), 42);
  EXPECT_EQ(s.str(), "weighted:w=1,2.5,4,axis=1");
  EXPECT_EQ(hit::Spec::parse(s.str()).get_doubles("w"), s.get_doubles("w"));
}

TEST(Spec, MalformedTextIsAParseError) {
  for (const char* bad :
       {"", ":", "blocks:", "blocks:=3", "blocks:b", "bl ocks", "blocks:b=", "blocks:b=1,b=2"}) {
    try {
      hit::Spec::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const hit::Error& e) {
      EXPECT_EQ(e.kind(), hit::ErrorKind::parse) << bad;
      EXPECT_THAT(e.what(), HasSubstr("'" + std::string(bad) + "'"));
    }
  }
}

TEST(Spec, BadValuesNameKeyAndValue) {
  const auto s = hit::Spec::parse("blockCyclic:b=two,f=1x,w=1,x,2");
  EXPECT_THAT(error_of([&] { s.get_int("b", 1); }), HasSubstr("b='two' is not an integer"));
  EXPECT_THAT(error_of([&] { s.get_double("f", 1); }), HasSubstr("f='1x' is not a number"));
  EXPECT_THAT(error_of([&] { s.get_doubles("w"); }), HasSubstr("list of numbers"));
}

// A spec given to another, in parentheses, is one value whatever it holds; it round-trips through
// str() and reads back with get_spec; unbalanced parentheses are a parse error.
TEST(Spec, NestedSpecsInParentheses) {
  const std::string text = "hierarchical:nodes=(columns2d:w=1,2,b=4),devices=(weighted:w=1,3),x=2";
  const hit::Spec s = hit::Spec::parse(text);
  EXPECT_EQ(s.params().size(), 3U);
  EXPECT_EQ(s.get("nodes").value_or(""), "(columns2d:w=1,2,b=4)");
  EXPECT_EQ(s.str(), text);
  EXPECT_EQ(hit::Spec::parse(s.str()).str(), text);
  const hit::Spec nodes = s.get_spec("nodes", "blocks");
  EXPECT_EQ(nodes.name(), "columns2d");
  EXPECT_EQ(nodes.get_doubles("w"), (std::vector<double>{1, 2}));
  EXPECT_EQ(nodes.get_int("b", 0), 4);
  EXPECT_EQ(s.get_spec("devices", "blocks").get_doubles("w"), (std::vector<double>{1, 3}));
  EXPECT_EQ(s.get_spec("missing", "blocks").name(), "blocks");
  EXPECT_THROW(hit::Spec::parse("hierarchical:nodes=(columns2d:w=1"), hit::Error);
  EXPECT_THROW(hit::Spec::parse("hierarchical:nodes=columns2d)"), hit::Error);
  EXPECT_THROW(hit::Spec::parse("h:nodes=(:x)").get_spec("nodes", "blocks"), hit::Error);
}

TEST(Spec, TypedValuesPrintCanonicallyAndReadBack) {
  // A spec built from values, not text: numbers exact (a third and 1e-7 read back the same
  // double), lists comma-separated, a nested spec in parentheses, a key set twice replaced in
  // place; the text parses back to the same values.
  const std::vector<double> w{1.0 / 3, 2, 1e-7};
  const hit::Spec devices = hit::Spec("weighted").with("w", w).with("axis", 1);
  const hit::Spec s = hit::Spec("hierarchical")
                          .with("nodes", hit::Spec("columns2d").with("b", 4))
                          .with("devices", devices)
                          .with("ranks_per_node", std::vector<std::int64_t>{2, 3})
                          .with("nodes", hit::Spec("blocks"));
  EXPECT_EQ(s.str(),
            "hierarchical:nodes=blocks,devices=(weighted:w=0.3333333333333333,2,1e-07,axis=1),"
            "ranks_per_node=2,3");
  const hit::Spec back = hit::Spec::parse(s.str());
  EXPECT_EQ(back.get_spec("devices", "blocks").get_doubles("w"), w);
  EXPECT_EQ(back.get_spec("devices", "blocks").get_int("axis", 0), 1);
  EXPECT_EQ(back.get_ints("ranks_per_node"), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(back.get_spec("nodes", "x").name(), "blocks");
  EXPECT_EQ(hit::Spec("b").with("f", 0.5).with("name", "x.mtx").str(), "b:f=0.5,name=x.mtx");
  hit::Spec erased = back;
  erased.erase("devices");
  erased.erase("absent");
  EXPECT_EQ(erased.str(), "hierarchical:nodes=blocks,ranks_per_node=2,3");
  // A number that would not read back is refused, naming the key.
  EXPECT_THROW((void)hit::Spec("weighted").with("w", std::vector<double>{1, std::nan("")}),
               hit::Error);
  EXPECT_THROW((void)hit::Spec("x").with("f", std::numeric_limits<double>::infinity()), hit::Error);
}

TEST(Spec, NameListsReadBackAsTheSameNames) {
  // A list of model files set as values parses back item for item, beside other keys; a name
  // that would split or swallow a key (a comma, '=', parentheses) or vanish (empty) is refused.
  const std::vector<std::string> files{"models/a.csv", "/tmp/b-1.csv"};
  const hit::Spec s = hit::Spec("fpm").with("models", files).with("axis", 0);
  EXPECT_EQ(s.str(), "fpm:models=models/a.csv,/tmp/b-1.csv,axis=0");
  const hit::Spec back = hit::Spec::parse(s.str());
  EXPECT_EQ(back.get_strings("models"), files);
  EXPECT_EQ(back.get_int("axis", 1), 0);
  EXPECT_TRUE(back.get_strings("absent").empty());
  for (const char* bad : {"a,b.csv", "k=v.csv", "f(1).csv", ""}) {
    EXPECT_THROW((void)hit::Spec("fpm").with("models", std::vector<std::string>{"x.csv", bad}),
                 hit::Error)
        << bad;
  }
}

TEST(Spec, UnknownKeysListTheAllowedOnes) {
  const auto s = hit::Spec::parse("blocks:size=3");
  const std::string msg = error_of([&] {
    s.check_keys({{"b", "block size", "1"}, {"axis", "axis", "0"}});
  });
  EXPECT_THAT(msg, HasSubstr("no parameter 'size'"));
  EXPECT_THAT(msg, HasSubstr("allowed: b, axis"));
}

struct FakePlugin {
  std::string n;
  std::string name() const { return n; }
  std::string description() const { return "a test plug-in"; }
  std::vector<hit::ParamInfo> params() const { return {{"x", "a number", "1"}}; }
};

TEST(Registry, FindsByNameAndListsWhatExists) {
  hit::Registry<FakePlugin> reg("test");
  reg.add(std::make_shared<FakePlugin>(FakePlugin{"alpha"}));
  reg.add(std::make_shared<FakePlugin>(FakePlugin{"beta"}));
  EXPECT_EQ(reg.get(hit::Spec::parse("beta:x=2")).name(), "beta");
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"alpha", "beta"}));
  const std::string unknown = error_of([&] { reg.get(hit::Spec::parse("gamma")); });
  EXPECT_THAT(unknown, HasSubstr("unknown test plug-in 'gamma'"));
  EXPECT_THAT(unknown, HasSubstr("registered: alpha, beta"));
  EXPECT_THAT(error_of([&] { reg.get(hit::Spec::parse("alpha:y=1")); }), HasSubstr("allowed: x"));
  EXPECT_THAT(error_of([&] { reg.add(std::make_shared<FakePlugin>(FakePlugin{"alpha"})); }),
              HasSubstr("registered twice"));
}

TEST(Config, CommandLineWinsOverEnvironment) {
  hit::Config config;
  EXPECT_EQ(hit::Config::env_name("layout-a"), "HIT_LAYOUT_A");
  ::setenv("HIT_TEST_KEY", "from-env", 1);
  EXPECT_EQ(config.get("test-key").value_or(""), "from-env");
  config.set("test-key", "from-cli");
  EXPECT_EQ(config.get("test-key").value_or(""), "from-cli");
  ::unsetenv("HIT_TEST_KEY");
  EXPECT_FALSE(config.get("other-key").has_value());
}

// Messages name where a value came from: the option the program spells, or the variable.
TEST(Config, SourceNamesTheOptionOrTheVariable) {
  hit::Config config;
  EXPECT_FALSE(config.source("test-source").has_value());
  ::setenv("HIT_TEST_SOURCE", "from-env", 1);
  EXPECT_EQ(config.source("test-source").value_or(""), "HIT_TEST_SOURCE");
  config.set("test-source", "a");
  EXPECT_EQ(config.source("test-source").value_or(""), "--test-source");
  config.set("test-source", "b", "--layout");
  EXPECT_EQ(config.source("test-source").value_or(""), "--layout");
  EXPECT_EQ(config.get("test-source").value_or(""), "b");
  ::unsetenv("HIT_TEST_SOURCE");
  EXPECT_EQ(config.source("test-source").value_or(""), "--layout");
}

TEST(Environment, IsAOneProcessRunWithoutMpiexec) {
  auto& env = hit::Environment::current();
  EXPECT_EQ(env.size(), 1);
  EXPECT_EQ(env.rank(), 0);
  EXPECT_THAT(error_of([] { hit::Environment second; }), HasSubstr("already exists"));
}

TEST(Environment, PluginPathErrorsNameTheEntry) {
  auto& env = hit::Environment::current();
  EXPECT_THAT(error_of([&] { env.load_plugins("/nonexistent/plugin.so"); }),
              HasSubstr("'/nonexistent/plugin.so' is neither a shared object nor a folder"));
  EXPECT_THAT(error_of([&] { env.load_plugins("/etc/hostname"); }),
              HasSubstr("cannot load plug-in"));
}

TEST(Error, KindsHaveNames) {
  EXPECT_EQ(hit::to_string(hit::ErrorKind::out_of_memory), "device out of memory");
  const hit::Error e(hit::ErrorKind::io, "x");
  EXPECT_EQ(e.kind(), hit::ErrorKind::io);
  EXPECT_STREQ(e.what(), "x");
}

// Quoted input is cut to its first characters and its length; no message grows past a screenful,
// whatever it quotes.
TEST(Error, QuotedInputAndMessagesAreBounded) {
  EXPECT_EQ(hit::excerpt("short"), "short");
  const std::string line(5000, 'x');
  EXPECT_EQ(hit::excerpt(line, 10), "xxxxxxxxxx... (5000 characters)");
  const hit::Error e(hit::ErrorKind::parse, "bad value '" + std::string(1 << 20, 'y') + "'");
  const std::string what = e.what();
  EXPECT_LT(what.size(), 2100U);
  EXPECT_THAT(what, StartsWith("bad value 'yyy"));
  EXPECT_THAT(what, EndsWith("... (message of 1048588 characters cut)"));
  EXPECT_STREQ(hit::Error(hit::ErrorKind::io, std::string(2000, 'z')).what(),
               std::string(2000, 'z').c_str());
}

// HIT_LOG_LEVEL names one of four levels (and `warning`, as the lines say it); anything else is
// an error listing them, not the default taken silently.
TEST(Log, LevelNamesAreCheckedAndListed) {
  EXPECT_EQ(hit::log::parse_level("error"), hit::log::Level::error);
  EXPECT_EQ(hit::log::parse_level("warn"), hit::log::Level::warn);
  EXPECT_EQ(hit::log::parse_level("warning"), hit::log::Level::warn);
  EXPECT_EQ(hit::log::parse_level("info"), hit::log::Level::info);
  EXPECT_EQ(hit::log::parse_level("debug"), hit::log::Level::debug);
  try {
    hit::log::parse_level("loud");
    FAIL() << "'loud' was taken as a level";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("HIT_LOG_LEVEL 'loud' is not a log level (levels: error, "
                                    "warn, info, debug)"));
  }
}

// HIT_WAIT names one of three policies, which read back as they were written; anything else is
// an error listing them. A started Environment has resolved `auto` to one of the other two.
TEST(WaitPolicy, NamesAreCheckedListedAndRoundTrip) {
  for (const char* name : {"auto", "spin", "sleep"}) {
    EXPECT_EQ(hit::to_string(hit::parse_wait_policy(name)), name);
  }
  EXPECT_NE(hit::parse_wait_policy("spin"), hit::parse_wait_policy("sleep"));
  for (const char* bad : {"nap", "", "Sleep", "auto "}) {
    try {
      hit::parse_wait_policy(bad);
      FAIL() << "'" << bad << "' was taken as a wait policy";
    } catch (const hit::Error& e) {
      EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
      EXPECT_THAT(e.what(), HasSubstr("HIT_WAIT '" + std::string(bad) +
                                      "' is not a wait policy (policies: auto, spin, sleep)"));
    }
  }
  EXPECT_NE(hit::Environment::current().wait_policy(), hit::WaitPolicy::automatic);
}

// The public functions take finished text (braces are not a format); the library's fmt overloads
// write the same lines; nothing below the configured level is written.
TEST(Log, TextAndFormattedMessagesFollowTheLevel) {
  auto& config = hit::Environment::current().config();
  config.set("log-level", "info");
  ::testing::internal::CaptureStderr();
  hit::log::info("plain {} text");
  hit::log::info("formatted {} of {}", 3, "x");
  hit::log::debug("not shown");
  hit::log::debug("not shown {}", 1);
  hit::log::rank(hit::log::Level::warn, "every rank");
  const std::string out = ::testing::internal::GetCapturedStderr();
  config.set("log-level", "warn");
  EXPECT_EQ(out,
            "hit info: plain {} text\nhit info: formatted 3 of x\n"
            "hit warning: [rank 0/1] every rank\n");
}

// The message of a lazy check is made only when it fails.
TEST(Require, MakesALazyMessageOnlyOnFailure) {
  int made = 0;
  const auto message = [&] {
    ++made;
    return std::string("row 7 outside the 5 held rows");
  };
  hit::require(true, hit::ErrorKind::invalid_argument, message);
  EXPECT_EQ(made, 0);
  try {
    hit::require(false, hit::ErrorKind::invalid_argument, message);
    FAIL() << "a failed check did not throw";
  } catch (const hit::Error& e) {
    EXPECT_EQ(made, 1);
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("row 7 outside the 5 held rows"));
  }
}

}  // namespace
