//===- ShapeRulesTest.cpp - Output-shape rules, static and symbolic -------===//

#include "ingot/ShapeRules.h"

#include <gtest/gtest.h>

#include <limits>

using namespace ingot::shape;

namespace {

constexpr int64_t D = kDynamic;

Shape bcast(std::vector<Shape> ins) {
  Shape out;
  std::string err;
  EXPECT_TRUE(broadcast(ins, &out, &err)) << err;
  return out;
}

TEST(ShapeRules, Basics) {
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 0}), 0);
  EXPECT_EQ(numElements({2, D}), kDynamic);
  // Past int64 the count saturates (it must never wrap to a small size);
  // a zero dim anywhere still makes it 0.
  const int64_t big = int64_t(1) << 40,
                most = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(numElements({big, big}), most);
  EXPECT_EQ(numElements({big, big, 0}), 0);
  EXPECT_EQ(numElements({big, big, D}), kDynamic);
  EXPECT_EQ(toString({2, D, 64}), "[2,?,64]");
  EXPECT_EQ(toString({}), "[]");
  int64_t a;
  EXPECT_TRUE(normalizeAxis(-1, 3, &a));
  EXPECT_EQ(a, 2);
  EXPECT_TRUE(normalizeAxis(-3, 3, &a));
  EXPECT_EQ(a, 0);
  EXPECT_FALSE(normalizeAxis(3, 3, &a));
  EXPECT_FALSE(normalizeAxis(-4, 3, &a));
  EXPECT_FALSE(normalizeAxis(0, 0, &a));
}

TEST(ShapeRules, Broadcast) {
  EXPECT_EQ(bcast({{2, 3, 4}, {4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(bcast({{2, 1, 4}, {3, 1}}), (Shape{2, 3, 4}));
  EXPECT_EQ(bcast({{}, {5}}), (Shape{5}));
  EXPECT_EQ(bcast({{1, 0}, {3, 1}}), (Shape{3, 0}));
  EXPECT_EQ(bcast({{2, 1, 1}, {1, 3, 1}, {1, 1, 4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(bcast({}), Shape{});
  // Dynamic dims: the most precise answer.
  EXPECT_EQ(bcast({{D}, {5}}), Shape{5});
  EXPECT_EQ(bcast({{D}, {1}}), Shape{D});
  EXPECT_EQ(bcast({{D}, {D}}), Shape{D});
  EXPECT_EQ(bcast({{D, 4}, {3, 1}}), (Shape{3, 4}));
  EXPECT_EQ(bcast({{D, 1}, {4}}), (Shape{D, 4}));

  Shape out;
  std::string err;
  EXPECT_FALSE(broadcast({{2, 3}, {4}}, &out, &err));
  EXPECT_NE(err.find("[2,3]"), std::string::npos) << err;
  EXPECT_NE(err.find("[4]"), std::string::npos) << err;
  EXPECT_FALSE(broadcast({{D, 3}, {2, 4}}, &out, &err));
  EXPECT_FALSE(broadcast({{0}, {5}}, &out, &err));
}

TEST(ShapeRules, MatMul) {
  Shape out;
  std::string err;
  ASSERT_TRUE(matmul({2, 3, 4}, {4, 5}, &out, &err)) << err;
  EXPECT_EQ(out, (Shape{2, 3, 5}));
  ASSERT_TRUE(matmul({4}, {4, 5}, &out, &err));
  EXPECT_EQ(out, Shape{5});
  ASSERT_TRUE(matmul({3, 4}, {4}, &out, &err));
  EXPECT_EQ(out, Shape{3});
  ASSERT_TRUE(matmul({4}, {4}, &out, &err));
  EXPECT_EQ(out, Shape{});
  ASSERT_TRUE(matmul({7, 1, 3, 4}, {5, 4, 2}, &out, &err));
  EXPECT_EQ(out, (Shape{7, 5, 3, 2}));
  ASSERT_TRUE(matmul({2, 4}, {6, 4, 3}, &out, &err));
  EXPECT_EQ(out, (Shape{6, 2, 3}));
  // Dynamic K is accepted; dynamic M/N/batch propagate.
  ASSERT_TRUE(matmul({D, D, 64}, {64, 128}, &out, &err));
  EXPECT_EQ(out, (Shape{D, D, 128}));
  ASSERT_TRUE(matmul({3, D}, {8, 5}, &out, &err));
  EXPECT_EQ(out, (Shape{3, 5}));
  ASSERT_TRUE(matmul({D, 3, 8}, {4, 8, 5}, &out, &err));
  EXPECT_EQ(out, (Shape{4, 3, 5}));

  EXPECT_FALSE(matmul({3, 4}, {5, 6}, &out, &err));
  EXPECT_NE(err.find("[3,4]"), std::string::npos) << err;
  EXPECT_FALSE(matmul({}, {4}, &out, &err));
  EXPECT_FALSE(matmul({2, 3, 4}, {3, 4, 5}, &out, &err));
}

TEST(ShapeRules, Gemm) {
  Shape out, c{5};
  std::string err;
  ASSERT_TRUE(gemm({3, 4}, {4, 5}, &c, false, false, &out, &err)) << err;
  EXPECT_EQ(out, (Shape{3, 5}));
  ASSERT_TRUE(gemm({4, 3}, {5, 4}, nullptr, true, true, &out, &err));
  EXPECT_EQ(out, (Shape{3, 5}));
  Shape c31{3, 1};
  ASSERT_TRUE(gemm({3, 4}, {4, 5}, &c31, false, false, &out, &err));
  Shape cd{7, 5};
  ASSERT_TRUE(gemm({D, 4}, {4, 5}, &cd, false, false, &out, &err));
  EXPECT_EQ(out, (Shape{7, 5})) << "a static C pins a dynamic M";
  EXPECT_FALSE(gemm({3, 4}, {5, 4}, nullptr, false, false, &out, &err));
  Shape bad{4};
  EXPECT_FALSE(gemm({3, 4}, {4, 5}, &bad, false, false, &out, &err));
  Shape rank3{1, 3, 5};
  EXPECT_FALSE(gemm({3, 4}, {4, 5}, &rank3, false, false, &out, &err));
  EXPECT_FALSE(gemm({3, 4, 1}, {4, 5}, nullptr, false, false, &out, &err));
}

TEST(ShapeRules, Transpose) {
  Shape out;
  std::string err;
  ASSERT_TRUE(transpose({2, 3, 4}, {}, &out, &err));
  EXPECT_EQ(out, (Shape{4, 3, 2}));
  ASSERT_TRUE(transpose({2, D, 4}, {0, 2, 1}, &out, &err));
  EXPECT_EQ(out, (Shape{2, 4, D}));
  EXPECT_FALSE(transpose({2, 3}, {0}, &out, &err));
  EXPECT_FALSE(transpose({2, 3}, {0, 0}, &out, &err));
  EXPECT_FALSE(transpose({2, 3}, {0, 2}, &out, &err));
}

TEST(ShapeRules, Reshape) {
  Shape out;
  std::string err;
  ASSERT_TRUE(reshape({2, 3, 4}, {6, -1}, false, &out, &err)) << err;
  EXPECT_EQ(out, (Shape{6, 4}));
  ASSERT_TRUE(reshape({2, 3, 4}, {0, -1}, false, &out, &err));
  EXPECT_EQ(out, (Shape{2, 12}));
  ASSERT_TRUE(reshape({2, 3, 4}, {24}, false, &out, &err));
  EXPECT_EQ(out, Shape{24});
  ASSERT_TRUE(reshape({0, 4}, {0, 2, 2}, true, &out, &err));
  EXPECT_EQ(out, (Shape{0, 2, 2}));
  ASSERT_TRUE(reshape({0, 4}, {-1, 2}, false, &out, &err));
  EXPECT_EQ(out, (Shape{0, 2}));
  // Dynamic input: a -1 becomes dynamic unless copied dims cancel the
  // unknown part.
  ASSERT_TRUE(reshape({D, 64}, {-1, 8, 8}, false, &out, &err));
  EXPECT_EQ(out, (Shape{D, 8, 8}));
  ASSERT_TRUE(reshape({D, 64}, {0, -1}, false, &out, &err));
  EXPECT_EQ(out, (Shape{D, 64}));
  ASSERT_TRUE(reshape({D, 12, 64}, {0, 0, 4, 16}, false, &out, &err));
  EXPECT_EQ(out, (Shape{D, 12, 4, 16}));
  ASSERT_TRUE(reshape({2, D}, {4, 5}, false, &out, &err));
  EXPECT_EQ(out, (Shape{4, 5}));

  EXPECT_FALSE(reshape({2, 3}, {4, -1}, false, &out, &err));
  EXPECT_NE(err.find("[2,3]"), std::string::npos) << err;
  EXPECT_FALSE(reshape({2, 3}, {-1, -1}, false, &out, &err));
  EXPECT_FALSE(reshape({2, 3}, {7}, false, &out, &err));
  EXPECT_FALSE(reshape({2, 3}, {-2, 3}, false, &out, &err));
  EXPECT_FALSE(reshape({2, 3}, {0, -1}, true, &out, &err));
  EXPECT_FALSE(reshape({6}, {0, 0, 6}, false, &out, &err));
  EXPECT_FALSE(reshape({D, 64}, {0, 7}, false, &out, &err));
}

TEST(ShapeRules, SqueezeUnsqueeze) {
  Shape out;
  std::string err;
  ASSERT_TRUE(squeeze({1, 3, 1, 4}, {}, &out, &err));
  EXPECT_EQ(out, (Shape{3, 4}));
  ASSERT_TRUE(squeeze({1, 3, 1, 4}, {-2}, &out, &err));
  EXPECT_EQ(out, (Shape{1, 3, 4}));
  ASSERT_TRUE(squeeze({D, 1}, {0}, &out, &err)) << "dynamic may be 1";
  EXPECT_EQ(out, (Shape{1}));
  EXPECT_FALSE(squeeze({D, 1}, {}, &out, &err));
  EXPECT_FALSE(squeeze({2, 3}, {0}, &out, &err));
  EXPECT_FALSE(squeeze({1, 3}, {2}, &out, &err));
  EXPECT_FALSE(squeeze({1, 1}, {0, -2}, &out, &err));

  ASSERT_TRUE(unsqueeze({3, 4}, {0, -1}, &out, &err));
  EXPECT_EQ(out, (Shape{1, 3, 4, 1}));
  ASSERT_TRUE(unsqueeze({3, D}, {1}, &out, &err));
  EXPECT_EQ(out, (Shape{3, 1, D}));
  ASSERT_TRUE(unsqueeze({}, {0}, &out, &err));
  EXPECT_EQ(out, Shape{1});
  EXPECT_FALSE(unsqueeze({3}, {2}, &out, &err));
  EXPECT_FALSE(unsqueeze({3}, {0, 0}, &out, &err));
}

TEST(ShapeRules, Concat) {
  Shape out;
  std::string err;
  ASSERT_TRUE(concat({{2, 3}, {2, 5}}, -1, &out, &err));
  EXPECT_EQ(out, (Shape{2, 8}));
  ASSERT_TRUE(concat({{D, 3}, {2, D}}, 0, &out, &err));
  EXPECT_EQ(out, (Shape{D, 3}));
  ASSERT_TRUE(concat({{1, D, 8}, {1, 4, 8}}, 1, &out, &err));
  EXPECT_EQ(out, (Shape{1, D, 8}));
  EXPECT_FALSE(concat({{2, 3}, {3, 3}}, 1, &out, &err));
  EXPECT_FALSE(concat({{2, 3}, {2, 3, 1}}, 0, &out, &err));
  EXPECT_FALSE(concat({{2, 3}}, 2, &out, &err));
  EXPECT_FALSE(concat({}, 0, &out, &err));
}

TEST(ShapeRules, GatherReduceShapeOp) {
  Shape out;
  std::string err;
  ASSERT_TRUE(gather({10, 4}, {2, 3}, 0, &out, &err));
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_TRUE(gather({5, 6, 7}, {}, -2, &out, &err));
  EXPECT_EQ(out, (Shape{5, 7}));
  EXPECT_FALSE(gather({5}, {1}, 1, &out, &err));
  EXPECT_FALSE(gather({}, {1}, 0, &out, &err));

  ASSERT_TRUE(reduce({2, 3, 4}, {1}, true, &out, &err));
  EXPECT_EQ(out, (Shape{2, 1, 4}));
  ASSERT_TRUE(reduce({2, 3, 4}, {-1, 0}, false, &out, &err));
  EXPECT_EQ(out, Shape{3});
  ASSERT_TRUE(reduce({2, D, 4}, {}, false, &out, &err));
  EXPECT_EQ(out, Shape{});
  ASSERT_TRUE(reduce({2, D, 4}, {}, true, &out, &err));
  EXPECT_EQ(out, (Shape{1, 1, 1}));
  EXPECT_FALSE(reduce({2, 3}, {2}, true, &out, &err));
  EXPECT_FALSE(reduce({2, 3}, {1, -1}, true, &out, &err));

  int64_t b, e;
  shapeOpRange(4, 0, std::numeric_limits<int64_t>::max(), &b, &e);
  EXPECT_EQ(b, 0);
  EXPECT_EQ(e, 4);
  shapeOpRange(4, -2, -1, &b, &e);
  EXPECT_EQ(b, 2);
  EXPECT_EQ(e, 3);
  shapeOpRange(4, -10, 10, &b, &e);
  EXPECT_EQ(b, 0);
  EXPECT_EQ(e, 4);
  shapeOpRange(4, 3, 1, &b, &e);
  EXPECT_EQ(e - b, 0);
}

} // namespace
