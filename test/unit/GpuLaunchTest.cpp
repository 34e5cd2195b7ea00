//===- GpuLaunchTest.cpp - Launch parameters and code-object choice -------===//
//
// What the GPU executor computes on the host before each launch, checked
// without a GPU: parameter values from shapes (numpy broadcasting strides
// worked out by hand), the grid, and which code object a device loads.
//
//===----------------------------------------------------------------------===//
#include "device/GpuLaunch.h"
#include "ingot/Device.h"

#include <gtest/gtest.h>

using namespace ingot;
using namespace ingot::gpu;

namespace {

TEST(GpuLaunchTest, BroadcastStridesFollowNumpy) {
  // [2,3,4] against itself: row-major strides.
  EXPECT_EQ(broadcastStride({2, 3, 4}, {2, 3, 4}, 0), 12u);
  EXPECT_EQ(broadcastStride({2, 3, 4}, {2, 3, 4}, 1), 4u);
  EXPECT_EQ(broadcastStride({2, 3, 4}, {2, 3, 4}, 2), 1u);
  // A bias [4] is right-aligned: 0 along the leading axes.
  EXPECT_EQ(broadcastStride({4}, {2, 3, 4}, 0), 0u);
  EXPECT_EQ(broadcastStride({4}, {2, 3, 4}, 1), 0u);
  EXPECT_EQ(broadcastStride({4}, {2, 3, 4}, 2), 1u);
  // [2,1,4] broadcasts along axis 1 only.
  EXPECT_EQ(broadcastStride({2, 1, 4}, {2, 3, 4}, 0), 4u);
  EXPECT_EQ(broadcastStride({2, 1, 4}, {2, 3, 4}, 1), 0u);
  // A size-1 axis of the output keeps a real stride (never used: coord 0).
  EXPECT_EQ(broadcastStride({1, 4}, {1, 4}, 0), 4u);
}

/// A step with inputs (x, bias) and output y, and the kernel the compiler
/// generates for it: pointers, numel(y), y's dims, then strides per input.
struct BiasAdd {
  Step step;
  GpuKernel kernel;
  BiasAdd() {
    step.kernel = "add", step.inputs = {0, 1}, step.outputs = {2};
    using K = GpuArg::Kind;
    kernel.symbol = "k", kernel.blockX = 256, kernel.gridOperand = 2;
    kernel.args = {{K::Pointer, 0, 0},
                   {K::Pointer, 1, 0},
                   {K::Pointer, 2, 0},
                   {K::Numel, 2, 0},
                   {K::Dim, 2, 0},
                   {K::Dim, 2, 1},
                   {K::BroadcastStride, 0, 0},
                   {K::BroadcastStride, 0, 1},
                   {K::BroadcastStride, 1, 0},
                   {K::BroadcastStride, 1, 1}};
  }
};

TEST(GpuLaunchTest, ParametersComeFromTheRunsShapes) {
  BiasAdd b;
  Launch l;
  Status s = evaluateLaunch(b.kernel, b.step, {{300, 48}, {48}, {300, 48}},
                            {0x1000, 0x2000, 0x3000}, {}, &l);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(l.params, (std::vector<uint64_t>{0x1000, 0x2000, 0x3000, 14400, 300,
                                             48, 48, 1, 0, 1}));
  EXPECT_EQ(l.grid[0], (14400u + 255) / 256); // 57 blocks
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.grid[2], 1u);
}

TEST(GpuLaunchTest, EmptyOutputsLaunchNothing) {
  BiasAdd b;
  Launch l;
  ASSERT_TRUE(evaluateLaunch(b.kernel, b.step, {{0, 48}, {48}, {0, 48}},
                             {1, 2, 3}, {}, &l));
  EXPECT_TRUE(l.empty());
}

TEST(GpuLaunchTest, RefusesShapesThatDoNotMatchTheTable) {
  BiasAdd b;
  Launch l;
  Status s =
      evaluateLaunch(b.kernel, b.step, {{300, 48}, {48}}, {1, 2}, {}, &l);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("3 operands expected"), std::string::npos);
  s = evaluateLaunch(b.kernel, b.step, {{2, 300, 48}, {48}, {300, 48}},
                     {1, 2, 3}, {}, &l);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("does not broadcast to [300,48]"),
            std::string::npos)
      << s.message();
}

TEST(GpuLaunchTest, GridsAndCacheAddressesFollowTheTable) {
  // A linear step's shape: x [m, 64] -> y [m, 96], one warp per column (4
  // per block), 4 rows per block along y; then the layer-1 caches.
  Step step;
  step.kernel = "linear", step.inputs = {0, 1}, step.outputs = {2};
  GpuKernel k;
  using K = GpuArg::Kind;
  k.symbol = "lin", k.blockX = 128;
  k.grid = {{GpuGridDim::kGridConstant, 1, 24}, {0, 64 * 4, 1}};
  k.args = {{K::Pointer, 0, 0},
            {K::KvKeys, 0, 1},
            {K::KvValues, 0, 1},
            {K::Dim, 0, 0}};
  KvAddresses kv{{0x10, 0x20}, {0x30, 0x40}};
  Launch l;
  Status s =
      evaluateLaunch(k, step, {{7, 64}, {96, 64}, {7, 96}}, {1, 2, 3}, kv, &l);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(l.params, (std::vector<uint64_t>{1, 0x20, 0x40, 7}));
  EXPECT_EQ(l.grid[0], 24u);
  EXPECT_EQ(l.grid[1], 2u); // ceil(7 rows / 4)
  EXPECT_EQ(l.grid[2], 1u);
  // No rows: nothing to launch.
  ASSERT_TRUE(
      evaluateLaunch(k, step, {{0, 64}, {96, 64}, {0, 96}}, {1, 2, 3}, kv, &l));
  EXPECT_TRUE(l.empty());
  // A cache layer the device does not hold is an error, not a null pointer.
  s = evaluateLaunch(k, step, {{7, 64}, {96, 64}, {7, 96}}, {1, 2, 3},
                     KvAddresses{{0x10}, {0x30}}, &l);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("KV cache of layer 1"), std::string::npos);
}

GpuTarget builtFor(std::vector<std::string> cubins, std::string ptx) {
  GpuTarget t;
  t.name = "cuda";
  for (const std::string &a : cubins)
    t.objects.push_back({a, CodeObject::Format::Cubin, 0, 1});
  if (!ptx.empty())
    t.objects.push_back({ptx, CodeObject::Format::Ptx, 0, 1});
  return t;
}

TEST(GpuLaunchTest, DevicesLoadTheirCubinElseThePtx) {
  GpuTarget t = builtFor({"sm_80", "sm_90"}, "sm_90");
  std::vector<size_t> i;
  ASSERT_TRUE(chooseCodeObjects(t, 9, 0, "H200", &i));
  EXPECT_EQ(i, std::vector<size_t>{1}); // sm_90 cubin
  ASSERT_TRUE(chooseCodeObjects(t, 8, 6, "A10", &i));
  EXPECT_EQ(i, std::vector<size_t>{0}); // sm_80 cubin runs on sm_86
  ASSERT_TRUE(chooseCodeObjects(t, 10, 0, "B200", &i));
  EXPECT_EQ(i, std::vector<size_t>{2}); // no sm_100 cubin: JIT the PTX
  // Generated and template kernels come as two PTX objects: both load.
  t.objects.push_back({"sm_90", CodeObject::Format::Ptx, 0, 1});
  ASSERT_TRUE(chooseCodeObjects(t, 10, 0, "B200", &i));
  EXPECT_EQ(i, (std::vector<size_t>{2, 3}));
  Status s = chooseCodeObjects(t, 7, 5, "Tesla T4", &i);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "built for sm_80, sm_90; this device is sm_75 "
                         "(Tesla T4): recompile with --target cuda:sm_75");
  s = chooseCodeObjects(builtFor({"sm_90"}, ""), 8, 9, "L4", &i);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("this device is sm_89 (L4)"), std::string::npos);
}

TEST(GpuLaunchTest, DeviceFlagParses) {
  DeviceRequest r;
  ASSERT_TRUE(parseDeviceRequest("cuda:3", &r));
  EXPECT_EQ(r.kind, DeviceRequest::Kind::Cuda);
  EXPECT_EQ(r.ordinal, 3);
  ASSERT_TRUE(parseDeviceRequest("cpu", &r));
  EXPECT_EQ(r.kind, DeviceRequest::Kind::Cpu);
  ASSERT_TRUE(parseDeviceRequest("auto", &r));
  EXPECT_EQ(r.kind, DeviceRequest::Kind::Auto);
  for (const char *bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:99999"})
    EXPECT_FALSE(parseDeviceRequest(bad, &r)) << bad;
}

} // namespace
