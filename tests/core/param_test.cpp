// Typed plug-in parameters (hit/core/param.hpp): the checks the registry makes before a plug-in
// runs, their messages (the plug-in, the parameter, the value and what is allowed) and the text
// --list prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/param.hpp"
#include "hit/core/registry.hpp"
#include "hit/core/spec.hpp"

namespace {

using hit::ParamInfo;
using ::testing::HasSubstr;

const std::vector<ParamInfo>& declarations() {
  static const std::vector<ParamInfo> params = {
      ParamInfo::integer("B", "tile size").at_least(1).required("the tile size B (e.g. B=64)"),
      ParamInfo::integer("b", "thin tile").at_least(1).at_most("B"),
      ParamInfo::integer("threads", "threads", "4").between(1, 4096),
      ParamInfo::real("fill", "fraction", "0.9").above(0).at_most(1),
      ParamInfo::real("factor", "fraction", "0.5")
          .above(0)
          .below(1)
          .range_in_words("a fraction strictly between 0 and 1"),
      ParamInfo::choice("inner", "inner partition", {"single", "threads", "blocks"}),
      ParamInfo::reals("w", "weights").above(0).named("weight"),
      ParamInfo::integers("sizes", "block sizes").at_least(1).named("block size"),
      ParamInfo::text("file", "a file")};
  return params;
}

std::string error_of(const std::string& spec) {
  try {
    hit::check_params(hit::Spec::parse(spec), declarations(), "layout");
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::plugin) << spec;
    return e.what();
  }
  return "";
}

TEST(Params, AValidSpecPasses) {
  EXPECT_EQ(error_of("t:B=64"), "");
  EXPECT_EQ(error_of("t:B=64,b=64,threads=4096,fill=1,factor=0.25,inner=blocks,w=1,2.5,sizes=1,"
                     "file=x.csv"),
            "");
}

TEST(Params, BelowTheMinimum) {
  EXPECT_EQ(error_of("t:B=0"), "layout 't:B=0': B=0 is not positive");
  EXPECT_THAT(error_of("t:B=64,threads=0"), HasSubstr("threads=0 is not between 1 and 4096"));
  EXPECT_THAT(error_of("t:B=64,fill=0"), HasSubstr("fill=0 is not in (0, 1]"));
  EXPECT_THAT(error_of("t:B=64,b=0"), HasSubstr("b=0 is not between 1 and B=64"));
}

TEST(Params, AboveTheMaximum) {
  EXPECT_THAT(error_of("t:B=64,threads=5000"), HasSubstr("threads=5000 is not between 1 and 4096"));
  EXPECT_THAT(error_of("t:B=64,fill=1.5"), HasSubstr("fill=1.5 is not in (0, 1]"));
  // A bound that is another parameter is shown with that parameter's value.
  EXPECT_EQ(error_of("t:B=64,b=128"), "layout 't:B=64,b=128': b=128 is not between 1 and B=64");
  EXPECT_THAT(error_of("t:B=64,factor=1"),
              HasSubstr("factor=1 is not a fraction strictly between 0 and 1"));
}

TEST(Params, ListItemsAreCheckedOneByOne) {
  EXPECT_THAT(error_of("t:B=64,w=1,0,2"), HasSubstr("weight 0 (position 1 of w) is not positive"));
  EXPECT_THAT(error_of("t:B=64,sizes=0"), HasSubstr("block size 0 is not positive"));
}

TEST(Params, NotANumber) {
  EXPECT_THAT(error_of("t:B=x"), HasSubstr("B='x' is not an integer"));
  EXPECT_THAT(error_of("t:B=2.5"), HasSubstr("B='2.5' is not an integer"));
  EXPECT_THAT(error_of("t:B=64,fill=lots"), HasSubstr("fill='lots' is not a number"));
  EXPECT_THAT(error_of("t:B=64,w=1,x"),
              HasSubstr("w='1,x' is not a comma-separated list of numbers"));
  EXPECT_THAT(error_of("t:B=64,fill=inf"), HasSubstr("fill='inf' is not a number"));
}

TEST(Params, UnknownChoice) {
  EXPECT_EQ(error_of("t:B=64,inner=magic"),
            "layout 't:B=64,inner=magic': inner=magic is not one of single, threads, blocks");
}

TEST(Params, MissingRequired) {
  EXPECT_EQ(error_of("t"), "layout 't' needs the tile size B (e.g. B=64)");
  EXPECT_EQ(error_of("t:b=2"), "layout 't:b=2' needs the tile size B (e.g. B=64)");
  const std::vector<ParamInfo> plain = {ParamInfo::text("dims", "extents").required()};
  try {
    hit::check_params(hit::Spec::parse("mesh"), plain, "topology");
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_STREQ(e.what(), "topology 'mesh' needs the parameter dims");
  }
}

TEST(Params, UnknownKeysListTheDeclaredOnes) {
  EXPECT_THAT(error_of("t:B=64,size=2"), HasSubstr("has no parameter 'size' (allowed: B, b, "));
}

TEST(Params, TypeTextForTheListing) {
  const auto& p = declarations();
  EXPECT_EQ(p[0].type_text(), "integer, positive, required");
  EXPECT_EQ(p[1].type_text(), "integer, between 1 and B");
  EXPECT_EQ(p[2].type_text(), "integer, between 1 and 4096");
  EXPECT_EQ(p[3].type_text(), "number, in (0, 1]");
  EXPECT_EQ(p[4].type_text(), "number, a fraction strictly between 0 and 1");
  EXPECT_EQ(p[5].type_text(), "one of single, threads, blocks");
  EXPECT_EQ(p[6].type_text(), "numbers, each positive");
  EXPECT_EQ(p[8].type_text(), "text");
  // The untyped aggregate of plug-ins written before types existed still works.
  const ParamInfo old{"x", "a number", "1"};
  EXPECT_EQ(old.type_text(), "text");
  EXPECT_FALSE(old.is_required());
}

struct TypedPlugin {
  std::string name() const { return "typed"; }
  std::string description() const { return "a test plug-in"; }
  std::vector<ParamInfo> params() const {
    return {ParamInfo::integer("n", "a count").at_least(1).required()};
  }
};

TEST(Params, TheRegistryChecksBeforeHandingOutThePlugin) {
  hit::Registry<TypedPlugin> reg("test");
  reg.add(std::make_shared<TypedPlugin>());
  EXPECT_EQ(reg.get(hit::Spec::parse("typed:n=3")).name(), "typed");
  try {
    (void)reg.get(hit::Spec::parse("typed:n=0"));
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_STREQ(e.what(), "test 'typed:n=0': n=0 is not positive");
  }
  EXPECT_THROW((void)reg.get(hit::Spec::parse("typed")), hit::Error);
  // find() names the plug-in only, for its declarations.
  EXPECT_EQ(reg.find("typed").params().size(), 1u);
}

}  // namespace
