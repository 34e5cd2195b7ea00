//===- KernelsDataTest.cpp - Data movement and conversion kernels ---------===//
//
// transpose, reshape, squeeze, unsqueeze, concat, gather, cast, shape,
// constant_of_shape and trilu against naive index loops. These move or
// convert values exactly, so results must match bit for bit.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include "cpu/KernelUtil.h"

#include <limits>

using namespace ingot;
using namespace ingot::test;

namespace {

/// Random bytes viewed as `dt`; data movement must not care about values.
Tensor randomOf(Rng &rng, DType dt, const Shape &s) {
  Tensor t;
  t.dtype = dt;
  t.shape = s;
  t.data.resize(count(s) * dtypeSize(dt));
  for (uint8_t &b : t.data)
    b = uint8_t(rng.gen());
  return t;
}

void expectBytes(const Tensor &got, const Shape &shape, DType dt,
                 const std::vector<uint8_t> &want) {
  ASSERT_EQ(got.dtype, dt);
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got.data[i], want[i]) << "byte " << i;
}

TEST(KernelsData, Transpose) {
  Rng rng(201);
  struct Case {
    Shape s;
    std::vector<int64_t> perm;
  };
  for (const Case &tc : std::vector<Case>{{{2, 3, 4, 5}, {0, 2, 1, 3}},
                                          {{2, 3, 4, 5}, {3, 2, 1, 0}},
                                          {{2, 3, 4, 5}, {}},
                                          {{1, 7, 1, 9}, {3, 1, 0, 2}},
                                          {{64, 100}, {1, 0}},
                                          {{3, 40, 50}, {0, 2, 1}},
                                          {{3, 40, 50}, {2, 0, 1}},
                                          {{33, 40, 5}, {1, 0, 2}},
                                          {{2, 70, 8, 33}, {0, 2, 1, 3}},
                                          {{300, 257}, {1, 0}},
                                          {{5}, {0}},
                                          {{}, {}}})
    for (DType dt : {DType::F32, DType::I64, DType::U8, DType::F16}) {
      Tensor x = randomOf(rng, dt, tc.s);
      std::vector<int64_t> perm = tc.perm;
      if (perm.empty())
        for (int64_t i = tc.s.size(); i-- > 0;)
          perm.push_back(i);
      Shape so;
      for (int64_t p : perm)
        so.push_back(tc.s[p]);
      const size_t es = dtypeSize(dt);
      std::vector<uint8_t> want(x.data.size());
      for (int64_t i = 0; i < count(so); ++i) {
        auto oi = unravel(i, so);
        std::vector<int64_t> ii(tc.s.size());
        for (size_t d = 0; d < perm.size(); ++d)
          ii[perm[d]] = oi[d];
        int64_t src = 0;
        for (size_t d = 0; d < tc.s.size(); ++d)
          src = src * tc.s[d] + ii[d];
        std::memcpy(&want[i * es], &x.data[src * es], es);
      }
      Call c{"transpose", {&x}, {}, {dt}};
      if (!tc.perm.empty())
        c.attrs.push_back(intsAttr("perm", tc.perm));
      SCOPED_TRACE(shape::toString(tc.s) + " " + dtypeName(dt));
      expectBytes(runOk(c), so, dt, want);
    }
}

TEST(KernelsData, ReshapeSqueezeUnsqueeze) {
  Rng rng(202);
  Tensor x = rng.uniform({2, 3, 4});
  struct Case {
    std::vector<int64_t> target;
    int64_t allowZero;
    Shape want;
  };
  for (const Case &tc : std::vector<Case>{{{6, -1}, 0, {6, 4}},
                                          {{0, -1}, 0, {2, 12}},
                                          {{-1}, 0, {24}},
                                          {{2, 0, 2, 2}, 0, {2, 3, 2, 2}},
                                          {{4, 3, 2}, 1, {4, 3, 2}}}) {
    Tensor target = i64({int64_t(tc.target.size())}, tc.target);
    for (int alias : {-1, 0}) {
      Call c{"reshape", {&x, &target}, {intAttr("allowzero", tc.allowZero)}};
      c.aliasInput = alias;
      expectBytes(runOk(c), tc.want, DType::F32, x.data);
    }
  }
  Tensor bad = i64({2}, {5, -1});
  std::vector<Tensor> outs;
  Status s = runKernel({"reshape", {&x, &bad}}, &outs);
  EXPECT_NE(s.message().find("cannot reshape [2,3,4]"), std::string::npos)
      << s.message();

  Tensor y = rng.uniform({1, 3, 1, 4});
  expectBytes(runOk({"squeeze", {&y}}), {3, 4}, DType::F32, y.data);
  expectBytes(runOk({"squeeze", {&y}, {intsAttr("axes", {-2})}}), {1, 3, 4},
              DType::F32, y.data);
  Tensor axes = i64({1}, {0});
  expectBytes(runOk({"squeeze", {&y, &axes}}), {3, 1, 4}, DType::F32, y.data);
  Call sq{"squeeze", {&y}};
  sq.aliasInput = 0;
  expectBytes(runOk(sq), {3, 4}, DType::F32, y.data);
  EXPECT_FALSE(
      runKernel({"squeeze", {&y}, {intsAttr("axes", {1})}}, &outs).isOk());

  expectBytes(runOk({"unsqueeze", {&x}, {intsAttr("axes", {0, -1})}}),
              {1, 2, 3, 4, 1}, DType::F32, x.data);
  Tensor uaxes = i64({1}, {2});
  expectBytes(runOk({"unsqueeze", {&x, &uaxes}}), {2, 3, 1, 4}, DType::F32,
              x.data);
  EXPECT_FALSE(runKernel({"unsqueeze", {&x}}, &outs).isOk()) << "axes required";
}

TEST(KernelsData, Concat) {
  Rng rng(203);
  struct Case {
    std::vector<Shape> ins;
    int64_t axis;
  };
  for (const Case &tc :
       std::vector<Case>{{{{2, 3}, {2, 5}}, 1},
                         {{{2, 3}, {4, 3}, {1, 3}}, 0},
                         {{{2, 3, 4}, {2, 1, 4}, {2, 0, 4}, {2, 7, 4}}, -2},
                         {{{2, 3, 4}, {2, 3, 9}}, -1},
                         {{{300, 64}, {300, 64}}, 1},
                         {{{5}}, 0}})
    for (DType dt : {DType::F32, DType::I64, DType::Bool}) {
      std::vector<Tensor> ins;
      for (const Shape &s : tc.ins)
        ins.push_back(randomOf(rng, dt, s));
      std::vector<const Tensor *> ptrs;
      for (const Tensor &t : ins)
        ptrs.push_back(&t);
      const int64_t r = tc.ins[0].size();
      const int64_t ax = tc.axis < 0 ? tc.axis + r : tc.axis;
      Shape so = tc.ins[0];
      so[ax] = 0;
      for (const Shape &s : tc.ins)
        so[ax] += s[ax];
      const size_t es = dtypeSize(dt);
      std::vector<uint8_t> want(count(so) * es);
      for (int64_t i = 0; i < count(so); ++i) {
        auto idx = unravel(i, so);
        size_t k = 0;
        while (idx[ax] >= tc.ins[k][ax])
          idx[ax] -= tc.ins[k++][ax];
        int64_t src = 0;
        for (int64_t d = 0; d < r; ++d)
          src = src * tc.ins[k][d] + idx[d];
        std::memcpy(&want[i * es], &ins[k].data[src * es], es);
      }
      SCOPED_TRACE(shape::toString(so) + " " + dtypeName(dt));
      expectBytes(runOk({"concat", ptrs, {intAttr("axis", tc.axis)}, {dt}}), so,
                  dt, want);
    }
  Tensor a = rng.uniform({2, 3}), b = rng.uniform({3, 3});
  std::vector<Tensor> outs;
  Status s = runKernel({"concat", {&a, &b}, {intAttr("axis", 1)}}, &outs);
  EXPECT_NE(s.message().find("differ at axis 0"), std::string::npos)
      << s.message();
}

TEST(KernelsData, Gather) {
  Rng rng(204);
  Tensor data = rng.uniform({10, 4, 6});
  struct Case {
    Tensor idx;
    int64_t axis;
  };
  std::vector<Case> cases;
  cases.push_back({i64({2, 3}, {0, -1, 3, 9, -10, 2}), 0});
  cases.push_back({i32({5}, {3, 0, -4, 1, 1}), 1});
  cases.push_back({i64({}, {5}), -1});
  cases.push_back({rng.ints<int64_t>(DType::I64, {500}, -10, 9), 0});
  cases.push_back({i64({0}, {}), 2});
  for (const Case &tc : cases) {
    const int64_t ax = tc.axis < 0 ? tc.axis + 3 : tc.axis;
    Shape so(data.shape.begin(), data.shape.begin() + ax);
    so.insert(so.end(), tc.idx.shape.begin(), tc.idx.shape.end());
    so.insert(so.end(), data.shape.begin() + ax + 1, data.shape.end());
    const int64_t ir = tc.idx.shape.size();
    std::vector<uint8_t> want(count(so) * 4);
    for (int64_t i = 0; i < count(so); ++i) {
      auto oi = unravel(i, so);
      int64_t flatIdx = 0;
      for (int64_t d = 0; d < ir; ++d)
        flatIdx = flatIdx * tc.idx.shape[d] + oi[ax + d];
      int64_t v = tc.idx.dtype == DType::I64 ? ptr<int64_t>(tc.idx)[flatIdx]
                                             : ptr<int32_t>(tc.idx)[flatIdx];
      if (v < 0)
        v += data.shape[ax];
      std::vector<int64_t> di(oi.begin(), oi.begin() + ax);
      di.push_back(v);
      di.insert(di.end(), oi.begin() + ax + ir, oi.end());
      int64_t src = (di[0] * 4 + di[1]) * 6 + di[2];
      std::memcpy(&want[i * 4], &data.data[src * 4], 4);
    }
    SCOPED_TRACE(shape::toString(so));
    expectBytes(runOk({"gather", {&data, &tc.idx}, {intAttr("axis", tc.axis)}}),
                so, DType::F32, want);
  }
  Tensor bad = i64({2}, {1, 10});
  std::vector<Tensor> outs;
  Status s = runKernel({"gather", {&data, &bad}}, &outs);
  EXPECT_NE(s.message().find("index 10"), std::string::npos) << s.message();
}

TEST(KernelsData, Cast) {
  Tensor f = f32({8}, {-2.7f, -0.5f, 0.0f, 0.49f, 1.5f, 3.99f, 255.0f, 300.0f});
  Tensor asI64 = runOk({"cast", {&f}, {}, {DType::I64}});
  const int64_t wantI64[] = {-2, 0, 0, 0, 1, 3, 255, 300}; // truncation
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(ptr<int64_t>(asI64)[i], wantI64[i]);
  Tensor asBool = runOk({"cast", {&f}, {}, {DType::Bool}});
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(ptr<uint8_t>(asBool)[i], ptr<float>(f)[i] != 0.0f);
  Tensor asU8 = runOk({"cast", {&f}, {}, {DType::U8}});
  EXPECT_EQ(ptr<uint8_t>(asU8)[7], uint8_t(300 % 256)); // wraps like C

  Tensor ints = i64({4}, {-3, 0, 1 << 20, 16777217});
  Tensor asF32 = runOk({"cast", {&ints}, {}, {DType::F32}});
  EXPECT_EQ(ptr<float>(asF32)[0], -3.0f);
  EXPECT_EQ(ptr<float>(asF32)[3], 16777216.0f); // nearest f32
  Tensor asF64 = runOk({"cast", {&ints}, {}, {DType::F64}});
  EXPECT_EQ(ptr<double>(asF64)[3], 16777217.0);
  Tensor asI32 = runOk({"cast", {&ints}, {}, {DType::I32}});
  EXPECT_EQ(ptr<int32_t>(asI32)[2], 1 << 20);

  // f16 / bf16 round trips on values they hold exactly, and rounding.
  Tensor vals =
      f32({6}, {1.0f, -2.5f, 0.000061035156f, 65504.0f, 1e-8f, 1.0009765625f});
  Tensor h = runOk({"cast", {&vals}, {}, {DType::F16}});
  EXPECT_EQ(ptr<uint16_t>(h)[0], 0x3c00);
  EXPECT_EQ(ptr<uint16_t>(h)[1], 0xc100);
  EXPECT_EQ(ptr<uint16_t>(h)[3], 0x7bff);
  EXPECT_EQ(ptr<uint16_t>(h)[4], 0x0000); // below half the smallest subnormal
  Tensor back = runOk({"cast", {&h}, {}, {DType::F32}});
  for (int i : {0, 1, 2, 3, 5})
    EXPECT_EQ(ptr<float>(back)[i], ptr<float>(vals)[i]) << i;
  Tensor bf = runOk({"cast", {&vals}, {}, {DType::BF16}});
  EXPECT_EQ(ptr<uint16_t>(bf)[0], 0x3f80);
  Tensor bfBack = runOk({"cast", {&bf}, {}, {DType::F32}});
  EXPECT_EQ(ptr<float>(bfBack)[1], -2.5f);
  // Every f16 bit pattern survives f16 -> f32 -> f16 (NaNs stay NaN).
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t hb = uint16_t(b);
    float v = cpu::halfToFloat(hb);
    if (std::isnan(v))
      EXPECT_TRUE((cpu::floatToHalf(v) & 0x7c00) == 0x7c00);
    else
      ASSERT_EQ(cpu::floatToHalf(v), hb) << std::hex << b;
  }

  Tensor bools = make<uint8_t>(DType::Bool, {3}, {1, 0, 1});
  Tensor bf32 = runOk({"cast", {&bools}, {}, {DType::F32}});
  EXPECT_EQ(ptr<float>(bf32)[0], 1.0f);
  EXPECT_EQ(ptr<float>(bf32)[1], 0.0f);
}

TEST(KernelsData, ShapeOp) {
  Rng rng(205);
  Tensor x = rng.uniform({2, 3, 5, 7});
  struct Case {
    int64_t start, end;
    std::vector<int64_t> want;
  };
  for (const Case &tc :
       std::vector<Case>{{0, std::numeric_limits<int64_t>::max(), {2, 3, 5, 7}},
                         {1, 3, {3, 5}},
                         {-1, std::numeric_limits<int64_t>::max(), {7}},
                         {-10, 10, {2, 3, 5, 7}},
                         {3, 1, {}}}) {
    Tensor out = runOk({"shape",
                        {&x},
                        {intAttr("start", tc.start), intAttr("end", tc.end)},
                        {DType::I64}});
    ASSERT_EQ(out.shape, Shape{int64_t(tc.want.size())});
    for (size_t i = 0; i < tc.want.size(); ++i)
      EXPECT_EQ(ptr<int64_t>(out)[i], tc.want[i]);
  }
  Tensor all = runOk({"shape", {&x}, {}, {DType::I64}});
  EXPECT_EQ(all.shape, Shape{4});
}

TEST(KernelsData, ConstantOfShape) {
  Tensor s = i64({3}, {2, 1, 300});
  Tensor f = runOk({"constant_of_shape", {&s}, {floatAttr("value", 1.5)}});
  ASSERT_EQ(f.shape, (Shape{2, 1, 300}));
  for (int64_t i = 0; i < 600; ++i)
    ASSERT_EQ(ptr<float>(f)[i], 1.5f);
  Tensor n = runOk(
      {"constant_of_shape", {&s}, {floatAttr("value", -7)}, {DType::I64}});
  EXPECT_EQ(ptr<int64_t>(n)[599], -7);
  Tensor b = runOk(
      {"constant_of_shape", {&s}, {floatAttr("value", 1)}, {DType::Bool}});
  EXPECT_EQ(ptr<uint8_t>(b)[0], 1);
  Tensor z = runOk({"constant_of_shape", {&s}, {}, {DType::I32}});
  EXPECT_EQ(ptr<int32_t>(z)[10], 0);
  Tensor scalarShape = i64({0}, {});
  Tensor sc =
      runOk({"constant_of_shape", {&scalarShape}, {floatAttr("value", 2)}});
  EXPECT_EQ(sc.shape, Shape{});
  EXPECT_EQ(ptr<float>(sc)[0], 2.0f);
}

TEST(KernelsData, Trilu) {
  Rng rng(206);
  for (Shape s : {Shape{4, 6}, Shape{3, 7, 5}, Shape{2, 2, 33, 40}})
    for (int64_t upper : {0, 1})
      for (int64_t k : {-2, 0, 1, 9, -40}) {
        Tensor x = rng.ints<int64_t>(DType::I64, s, 1, 100);
        Tensor kt = i64({}, {k});
        Tensor out = runOk(
            {"trilu", {&x, &kt}, {intAttr("upper", upper)}, {DType::I64}});
        ASSERT_EQ(out.shape, s);
        const int64_t rows = s[s.size() - 2], cols = s.back();
        for (int64_t i = 0; i < count(s); ++i) {
          int64_t r = (i / cols) % rows, c = i % cols;
          bool keep = upper ? c - r >= k : c - r <= k;
          ASSERT_EQ(ptr<int64_t>(out)[i], keep ? ptr<int64_t>(x)[i] : 0)
              << "upper=" << upper << " k=" << k << " at " << i;
        }
      }
  Tensor x = rng.uniform({3, 3});
  Tensor lower = runOk({"trilu", {&x, nullptr}, {intAttr("upper", 0)}});
  EXPECT_EQ(ptr<float>(lower)[1], 0.0f);
  EXPECT_EQ(ptr<float>(lower)[3], ptr<float>(x)[3]);
  Tensor v = rng.uniform({5});
  std::vector<Tensor> outs;
  EXPECT_FALSE(runKernel({"trilu", {&v}}, &outs).isOk());
}

} // namespace
