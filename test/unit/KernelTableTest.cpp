//===- KernelTableTest.cpp - Every kernel's signature in the table --------===//
//
// The compiler, the memory planner, the manifest validator and the CPU
// registry all read the kernel table (ingot/KernelTable.h), so every entry
// must be well formed and every CPU kernel must have one; and a kernel whose
// own checks accept more than its signature (an attribute, a dtype, an operand
// count) is caught by KernelContext the first time the check runs, which the
// kernel tests and the end-to-end tests exercise. Here: the table's shape, and
// that those guards fire.
//
//===----------------------------------------------------------------------===//
#include "cpu/KernelRegistry.h"

#include <gtest/gtest.h>

#include <set>

using namespace ingot;
using namespace ingot::cpu;

namespace {

void expectWellFormed(const std::vector<OperandSpec> &ops, size_t numInputs,
                      bool inputs, const std::string &kernel) {
  bool optionalSeen = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OperandSpec &o = ops[i];
    EXPECT_TRUE(o.name && *o.name) << kernel << " operand " << i;
    EXPECT_FALSE(optionalSeen && !o.optional)
        << kernel << ": required operand '" << o.name
        << "' after an optional one";
    optionalSeen |= o.optional;
    EXPECT_TRUE(!o.dtypes.empty() || o.sameAs >= 0)
        << kernel << ": operand '" << o.name << "' admits no dtype";
    // sameAs names an input before it (any input, for an output).
    if (o.sameAs >= 0)
      EXPECT_LT(size_t(o.sameAs), inputs ? i : numInputs)
          << kernel << ": operand '" << o.name << "'";
  }
}

TEST(KernelTable, EveryEntryIsWellFormed) {
  const std::vector<KernelSpec> &table = kernelTable();
  ASSERT_GE(table.size(), 60u);
  std::set<std::string> names;
  for (const KernelSpec &k : table) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(names.insert(k.name).second) << "declared twice";
    ASSERT_TRUE(k.sig.declared()) << "no outputs";
    // Control-flow kernels write nothing; skip reads nothing either.
    EXPECT_EQ(k.sig.outputs.empty(), k.sig.control);
    if (!k.sig.control)
      EXPECT_FALSE(k.sig.inputs.empty());
    expectWellFormed(k.sig.inputs, k.sig.inputs.size(), true, k.name);
    expectWellFormed(k.sig.outputs, k.sig.inputs.size(), false, k.name);
    std::set<std::string_view> attrs(k.sig.attrs.begin(), k.sig.attrs.end());
    EXPECT_EQ(attrs.size(), k.sig.attrs.size()) << "an attribute twice";
    // Quantised dtypes live only in weights: no output may hold one.
    for (const OperandSpec &o : k.sig.outputs)
      for (DType q : {DType::Q8, DType::Q4, DType::Q4M, DType::F8E4M3})
        EXPECT_FALSE(o.dtypes.contains(q)) << o.name;
    EXPECT_EQ(findKernelSpec(k.name), &k);
  }
  EXPECT_EQ(findKernelSpec("no_such_kernel"), nullptr);
}

// The CPU runtime implements every kernel of the table, and nothing else;
// each registered kernel reads its entry's contract from the table.
TEST(KernelTable, CpuRegistryMatchesTheTable) {
  std::set<std::string> declared, registered;
  for (const KernelSpec &k : kernelTable())
    declared.insert(k.name);
  for (const KernelInfo &k : allKernels()) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(registered.insert(k.name).second) << "registered twice";
    const KernelSpec *spec = findKernelSpec(k.name);
    ASSERT_NE(spec, nullptr) << "implemented but not in the kernel table";
    EXPECT_EQ(k.spec, spec) << "the entry is read in place";
    EXPECT_EQ(&k.sig(), &spec->sig);
  }
  EXPECT_EQ(declared, registered);
  // flatten, once in place in the runtime only, is in place for the
  // planner too now that both read one table.
  EXPECT_TRUE(findKernelSpec("flatten")->inPlace);
}

TEST(KernelTable, SignatureQueries) {
  const KernelSignature &linear = findKernel("linear")->sig();
  EXPECT_EQ(linear.minInputs(), 2u);
  EXPECT_EQ(linear.maxInputs(), 4u);
  EXPECT_EQ(linear.inputNames(), "x, weight, bias?, residual?");
  EXPECT_EQ(linear.attrNames(), "activation, w_layout");
  EXPECT_TRUE(acceptsDType(*linear.input(1), DType::Q4, std::nullopt));
  EXPECT_FALSE(acceptsDType(*linear.input(0), DType::I64, std::nullopt));
  const KernelSignature &concat = findKernel("concat")->sig();
  EXPECT_EQ(concat.maxInputs(), SIZE_MAX);
  EXPECT_EQ(concat.input(7), &concat.inputs.back());
  EXPECT_TRUE(acceptsDType(*concat.input(3), DType::I64, DType::I64));
  EXPECT_FALSE(acceptsDType(*concat.input(3), DType::I64, DType::F32));
  EXPECT_EQ(describeAccepted(*concat.input(3), concat, DType::F32),
            "the dtype of input 0 'x0' (float32)");
  EXPECT_EQ(sig::dtypes::kIndex.names(), "int64, int32");
}

TEST(KernelTable, KernelsCannotOutgrowTheirSignature) {
  // softmax's code run under relu's table entry: it checks an arity,
  // reads an attribute and accepts dtypes relu's entry does not declare.
  KernelContext ctx("relu", "test", nullptr, nullptr);
  ctx.inputs.push_back({true, nullptr, DType::F32, {2}, "x"});
  ctx.outputs.resize(1);
  int64_t v;
  Status st = ctx.attrInt("axis", &v, int64_t(0));
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("the kernel and its table entry "
                              "(KernelRegistry) disagree: the kernel reads "
                              "attribute 'axis', which the table does not "
                              "declare (it declares none)"),
            std::string::npos)
      << st.message();
  st = ctx.expectArity(1, 2, 1);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("the kernel takes 1 to 2 inputs"),
            std::string::npos)
      << st.message();
  st = ctx.expectInputDType(0, {DType::F32, DType::Bool});
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("the kernel accepts bool on input 0 'x', the "
                              "table only float32, int64, int32"),
            std::string::npos)
      << st.message();
  // Within the signature the checks behave as before.
  EXPECT_TRUE(ctx.expectArity(1, 1, 1));
  EXPECT_TRUE(ctx.expectInputDType(0, {DType::F32}));
  // A name not in the table (a test's own) is not held to anything.
  KernelContext other("not_a_kernel", "test", nullptr, nullptr);
  EXPECT_TRUE(other.attrInt("anything", &v, int64_t(0)));
}

} // namespace
