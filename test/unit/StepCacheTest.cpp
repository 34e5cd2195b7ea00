//===- StepCacheTest.cpp - what a step keeps from its weights -------------===//
#include "cpu/StepCache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ingot::cpu;

namespace {

TEST(StepCache, BuildsOncePerKeyAndType) {
  StepCache cache;
  int builds = 0;
  auto floats = [&] {
    ++builds;
    return std::vector<float>{1.0f, 2.0f};
  };
  const float weight[2] = {};
  const uint64_t key = stepCacheKey(weight, {2, 7});
  EXPECT_EQ(*cache.get<std::vector<float>>(key, floats),
            (std::vector<float>{1.0f, 2.0f}));
  cache.get<std::vector<float>>(key, floats);
  EXPECT_EQ(builds, 1);
  // Another shape of the same weight rebuilds.
  cache.get<std::vector<float>>(stepCacheKey(weight, {2, 8}), floats);
  EXPECT_EQ(builds, 2);
  // The same key asked for another type is built as that type, never the
  // stored value reinterpreted.
  auto text = cache.get<std::string>(stepCacheKey(weight, {2, 8}),
                                     [] { return std::string("packed"); });
  EXPECT_EQ(*text, "packed");
  EXPECT_NE(stepCacheKey(weight, {2, 7}), stepCacheKey(weight + 1, {2, 7}));
}

} // namespace
