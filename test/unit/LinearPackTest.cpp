//===- LinearPackTest.cpp - "nk16" packed weights in the linear kernel ----===//
//
// packWeight / nk16Index agree with each other and are a permutation, and
// every ISA's "nk" kernel gives bitwise the same sums from "nk16"-packed
// weights as from row-major ones (so packed and unpacked artifacts give the
// same logits), for odd N and K, every row count up to a group, f32, f16
// and bf16.
//
//===----------------------------------------------------------------------===//

#include "LlmTestUtil.h"

#include "cpu/Linear.h"
#include "ingot/WeightLayout.h"

using namespace ingot;
using namespace ingot::test;

namespace {

TEST(WeightLayout, Nk16IndexIsAPermutationMatchingPackWeight) {
  for (size_t elem : {size_t(1), size_t(2), size_t(4)})
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {16, 16}, {17, 63}, {33, 64}, {40, 130}, {5, 200}}) {
      SCOPED_TRACE("elem " + std::to_string(elem) + " n=" + std::to_string(n) +
                   " k=" + std::to_string(k));
      std::vector<uint8_t> src(size_t(n * k) * elem), dst(src.size());
      for (size_t i = 0; i < src.size(); ++i)
        src[i] = uint8_t(i * 131 + i / 7);
      ASSERT_TRUE(
          packWeight("nk16", src.data(), n, k, elem, dst.data()).isOk());
      std::vector<bool> seen(size_t(n * k), false);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < k; ++c) {
          const int64_t at = nk16Index(r, c, n, k, elem);
          ASSERT_GE(at, 0);
          ASSERT_LT(at, n * k);
          ASSERT_FALSE(seen[size_t(at)]) << r << "," << c;
          seen[size_t(at)] = true;
          ASSERT_EQ(0, std::memcmp(&dst[size_t(at) * elem],
                                   &src[size_t(r * k + c) * elem], elem));
        }
      // A panel's chunk of consecutive rows is one contiguous run.
      const int64_t chunk = nk16Chunk(elem);
      if (n >= 2 && k >= chunk) {
        EXPECT_EQ(nk16Index(1, 0, n, k, elem), chunk);
      }
    }
  std::vector<uint8_t> b(16);
  EXPECT_FALSE(packWeight("nk32", b.data(), 2, 2, 4, b.data()).isOk());
  EXPECT_TRUE(packWeight("row-major", b.data(), 2, 2, 2, b.data() + 8).isOk());
  EXPECT_TRUE(isKnownWeightLayout("nk16"));
  EXPECT_FALSE(isKnownWeightLayout("nk8"));
}

/// The weight `w` ([n, k], row-major) packed as "nk16".
Tensor packed(const Tensor &w) {
  Tensor p = w;
  EXPECT_TRUE(packWeight("nk16", w.data.data(), w.shape[0], w.shape[1],
                         dtypeSize(w.dtype), p.data.data())
                  .isOk());
  return p;
}

struct IsaSet {
  const char *name;
  const cpu::LinearKernelSet *set;
};

std::vector<IsaSet> runnableSets() {
  std::vector<IsaSet> sets = {{"generic", &cpu::genericLinearKernels()}};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c"))
    sets.push_back({"avx2", &cpu::avx2LinearKernels()});
  if (__builtin_cpu_supports("avx512f"))
    sets.push_back({"avx512", &cpu::avx512LinearKernels()});
  return sets;
}

TEST(LinearPack, Nk16EqualsNkBitwiseOnEveryIsa) {
  Rng rng(4242);
  const int64_t ns[] = {1, 15, 16, 17, 40, 133};
  const int64_t ks[] = {1, 15, 31, 33, 64, 77, 130};
  const int64_t ms[] = {1, 2, 3, 4, 5, 9, 32};
  for (const IsaSet &isa : runnableSets())
    for (DType dt : {DType::F32, DType::F16, DType::BF16})
      for (int64_t n : ns)
        for (int64_t k : ks) {
          const Weight w = makeWeight(rng, dt, {n, k});
          const Tensor wp = packed(w.t);
          const Tensor bias = rng.uniform({n});
          const Tensor x = rng.uniform({32, k});
          for (int64_t m : ms) {
            SCOPED_TRACE(std::string(isa.name) + " " + dtypeName(dt) +
                         " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                         " k=" + std::to_string(k));
            cpu::LinearDecodeArgs a;
            a.m = m;
            a.n = n;
            a.k = k;
            a.x = ptr<float>(x);
            a.wType = dt;
            a.bias = (n + m) % 2 ? ptr<float>(bias) : nullptr;
            std::vector<float> want(size_t(m * n)), got(want.size(), -7.0f);
            a.w = w.t.data.data();
            a.y = want.data();
            isa.set->nk(a, 0, n);
            a.w = wp.data.data();
            a.nk16 = true;
            a.y = got.data();
            // Ranges that start inside a panel and end past it, too.
            const int64_t split = std::min<int64_t>(n, 5);
            isa.set->nk(a, 0, split);
            isa.set->nk(a, split, n);
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(),
                                     want.size() * sizeof(float)));
          }
        }
}

TEST(LinearPack, KnPanelsPackedOnceEqualPackedPerCall) {
  // knMany over all of W packed by packKn (what a weight's step keeps)
  // gives bitwise the sums it packs panel by panel: N with a 16-column
  // last panel and a scalar tail, K across two panel depths, chunks that
  // start at multiples of 64 as runKn's do.
  Rng rng(977);
  for (const IsaSet &isa : runnableSets()) {
    if (!isa.set->knMany || !isa.set->packKn)
      continue;
    for (DType dt : {DType::F32, DType::F16, DType::BF16})
      for (int64_t n : {int64_t(37), int64_t(112), int64_t(200)})
        for (int64_t k : {int64_t(9), int64_t(300)}) {
          SCOPED_TRACE(std::string(isa.name) + " " + dtypeName(dt) +
                       " n=" + std::to_string(n) + " k=" + std::to_string(k));
          const int64_t m = 40;
          const Weight w = makeWeight(rng, dt, {k, n});
          const Tensor x = rng.uniform({m, k});
          const Tensor bias = rng.uniform({n});
          cpu::LinearDecodeArgs a;
          a.m = m, a.n = n, a.k = k;
          a.x = ptr<float>(x);
          a.w = w.t.data.data();
          a.wType = dt;
          a.bias = ptr<float>(bias);
          std::vector<float> want(size_t(m * n)), got(want.size(), -7.0f);
          a.y = want.data();
          isa.set->knMany(a, 0, n);
          const cpu::AlignedFloats panels = isa.set->packKn(a);
          a.knPanels = panels.data();
          a.y = got.data();
          for (int64_t c = 0; c < n; c += 64)
            isa.set->knMany(a, c, std::min(n, c + 64));
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(),
                                   want.size() * sizeof(float)));
        }
  }
}

TEST(LinearPack, KernelNk16EqualsNk) {
  // Through the kernel: decode, prefill row groups and panels, threads.
  Rng rng(77);
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {133, 77}, {261, 520}, {2000, 64}})
      for (int64_t m : {1, 3, 33, 70}) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + " m=" + std::to_string(m) +
                     " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const Weight w = makeWeight(rng, dt, {n, k});
        const Tensor wp = packed(w.t), x = rng.uniform({m, k}),
                     b = rng.uniform({n});
        const Tensor want =
            runOk(Call("linear", {&x, &w.t, &b}, {strAttr("w_layout", "nk")}));
        Call packedCall("linear", {&x, &wp, &b}, {strAttr("w_layout", "nk16")});
        packedCall.layouts = {"", "nk16"};
        const Tensor got = runOk(packedCall);
        ASSERT_EQ(want.shape, got.shape);
        EXPECT_TRUE(want.data == got.data);
      }
}

TEST(LinearPack, RejectsUnknownLayout) {
  Rng rng(1);
  const Tensor x = rng.uniform({2, 8}), w = rng.uniform({4, 8});
  std::vector<Tensor> outs;
  EXPECT_FALSE(
      runKernel(Call("linear", {&x, &w}, {strAttr("w_layout", "nk8")}), &outs)
          .isOk());
}

} // namespace
