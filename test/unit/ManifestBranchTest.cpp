//===- ManifestBranchTest.cpp - Plans with skip steps (ONNX If) -----------===//
//
// A branch lowers to skip_unless / then-steps / skip / else-steps, both
// branches copying into one result buffer (passes/LowerToPlan.cpp). The
// plan here: r = c ? relu(w) : neg(x), where w is a weight, so the
// then-branch reads only constants yet must not be taken for a step that
// runs once (it does not run when c is false). Hostile skip counts are
// refused at load.
//
//===----------------------------------------------------------------------===//
#include "ManifestMutation.h"

#include "exec/ConstantSteps.h"
#include "ingot/Executor.h"
#include "ingot/ThreadPool.h"

using namespace ingot;
using namespace ingot::testing;

namespace {

PlanBuilder branchPlan() {
  PlanBuilder p;
  p.input("x", DType::F32, {2, 4}, {{2, ""}, {4, ""}}); // 0
  p.input("c", DType::Bool, {}, {});                    // 1
  p.param("w", {2, 4});                                 // 2
  p.arena("r", DType::F32, {2, 4}, 0);                  // 3
  p.arena("t", DType::F32, {2, 4}, 64);                 // 4
  p.arena("e", DType::F32, {2, 4}, 64);                 // 5
  p.step("skip_unless", {1}, {}, {makeAttr("steps", int64_t(3))});
  p.step("relu", {2}, {4});
  p.step("copy", {4}, {3});
  p.step("skip", {}, {}, {makeAttr("steps", int64_t(2))});
  p.step("neg", {0}, {5});
  p.step("copy", {5}, {3});
  p.output("r", 3, {{2, ""}, {4, ""}});
  return p;
}

class ManifestBranch : public MutatedPlanTest {
protected:
  PlanBuilder plan() const override { return branchPlan(); }
};

/// Runs `exec` with condition `c`; returns r's floats.
std::vector<float> runWith(Executor &exec, bool c,
                           const std::vector<float> &x) {
  NamedTensor xt{"x", {DType::F32, {2, 4}, std::vector<uint8_t>(32)}};
  std::memcpy(xt.tensor.data.data(), x.data(), 32);
  NamedTensor ct{"c", {DType::Bool, {}, {uint8_t(c)}}};
  std::vector<NamedTensor> out;
  Status st = exec.run({xt, ct}, &out);
  EXPECT_TRUE(st) << st.message();
  if (out.size() != 1)
    return {};
  std::vector<float> r(8);
  std::memcpy(r.data(), out[0].tensor.data.data(), 32);
  return r;
}

TEST_F(ManifestBranch, EachConditionRunsItsBranch) {
  std::unique_ptr<Artifact> art;
  ASSERT_TRUE(Artifact::open(base_, &art));
  ThreadPool pool(2);
  Executor exec(*art, pool);
  const std::vector<float> x = {0.5f, -1.5f, 2.0f, -0.25f,
                                3.0f, -4.0f, 0.0f, 1.0f};
  // Else first: the weight-only relu has not run when c turns true.
  for (bool c : {false, true, false, true}) {
    std::vector<float> r = runWith(exec, c, x);
    ASSERT_EQ(r.size(), 8u);
    for (int i = 0; i < 8; ++i) {
      const float w = 0.01f * float(i % 7 - 3);
      EXPECT_EQ(r[i], c ? std::max(w, 0.0f) : -x[i]) << "c=" << c << " i=" << i;
    }
  }
}

// Both copies write r: it is never a run-once result, although each
// copy reads only weight-derived values; the relu of the weight is.
TEST_F(ManifestBranch, OnlyTheWeightOnlyStepsOfABranchRunOnce) {
  std::unique_ptr<Artifact> art;
  ASSERT_TRUE(Artifact::open(base_, &art));
  ConstantSteps c = findConstantSteps(art->manifest());
  EXPECT_EQ(c.step,
            (std::vector<bool>{false, true, false, false, false, false}));
}

TEST_F(ManifestBranch, SkipCountsStayInsideThePlan) {
  expectRefused(
      [](Manifest &m) { m.steps[0].attrs[0].i = 6; },
      {"step 0 ('skip_unless' from 'n0/skip_unless'): attribute \"steps\" "
       "must be an integer in [0, 5], the steps after it"});
  expectRefused([](Manifest &m) { m.steps[3].attrs[0].i = -1; },
                {"step 3", "[0, 2]"});
  expectRefused([](Manifest &m) { m.steps[3].attrs.clear(); },
                {"step 3", "attribute \"steps\" is missing"});
  expectRefused(
      [](Manifest &m) { m.buffers[1].dtype = m.inputs[1].dtype = DType::I64; },
      {"step 0", "'skip_unless' takes bool there"});
}

} // namespace
