//===- ProfilerTest.cpp - Kernel cost estimates, traces and tables --------===//
//
// The cost model is checked against hand-computed bytes and FLOPs for the
// kernels that dominate an LLM step (linear, paged attention); the profiler
// against a real Executor run: one trace event per kernel per run, valid
// JSON, and a table whose shares add up to the kernels' share of step time.
//
//===----------------------------------------------------------------------===//

#include "ingot/Profiler.h"
#include "JsonText.h"
#include "cpu/KernelRegistry.h"
#include "exec/KernelCost.h"
#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/ThreadPool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <unistd.h>

using namespace ingot;

namespace {

Attr intAttr(const std::string &name, int64_t v) {
  Attr a;
  a.name = name, a.kind = Attr::Kind::Int, a.i = v;
  return a;
}

cpu::KernelInput operand(DType t, shape::Shape s, const void *data = nullptr,
                         std::string name = "") {
  cpu::KernelInput in;
  in.present = true, in.dtype = t, in.shape = std::move(s), in.data = data;
  in.name = std::move(name);
  return in;
}

cpu::KernelOutput result(DType t, shape::Shape s) {
  cpu::KernelOutput o;
  o.dtype = t, o.shape = std::move(s), o.shapeSet = true;
  return o;
}

TEST(KernelCost, LinearCountsWeightsActivationsAndTwoMnk) {
  cpu::KernelContext ctx("linear", "mlp.up", nullptr, nullptr);
  ctx.inputs = {operand(DType::F32, {3, 8}), operand(DType::F16, {16, 8})};
  ctx.outputs = {result(DType::F32, {3, 16})};
  const KernelCost c = estimateKernelCost(ctx);
  EXPECT_EQ(c.bytes, 3 * 8 * 4 + 16 * 8 * 2 + 3 * 16 * 4); // x + W + y
  EXPECT_EQ(c.flops, 2 * 3 * 16 * 8);                      // 2·m·n·k
}

TEST(KernelCost, MatMulAndDefaultRule) {
  cpu::KernelContext mm("matmul", "", nullptr, nullptr);
  mm.inputs = {operand(DType::F32, {2, 5, 7}), operand(DType::F32, {7, 3})};
  mm.outputs = {result(DType::F32, {2, 5, 3})};
  EXPECT_EQ(estimateKernelCost(mm).flops, 2 * (2 * 5 * 3) * 7);
  EXPECT_EQ(estimateKernelCost(mm).bytes, (70 + 21 + 30) * 4);

  // conv: each output element is a dot product with one weight row
  // (C/group x kh x kw = 3 x 3 x 2 here).
  cpu::KernelContext conv("conv", "", nullptr, nullptr);
  conv.inputs = {operand(DType::F32, {1, 6, 9, 9}),
                 operand(DType::F32, {4, 3, 3, 2})};
  conv.outputs = {result(DType::F32, {1, 4, 7, 8})};
  EXPECT_EQ(estimateKernelCost(conv).flops, 2 * (4 * 7 * 8) * (3 * 3 * 2));

  // An unknown kernel: every operand byte once, no FLOPs.
  cpu::KernelContext other("kernel_from_the_future", "", nullptr, nullptr);
  other.inputs = {operand(DType::F16, {10}), cpu::KernelInput{},
                  operand(DType::I64, {3})};
  other.outputs = {result(DType::F32, {4})};
  EXPECT_EQ(estimateKernelCost(other).bytes, 20 + 24 + 16);
  EXPECT_EQ(estimateKernelCost(other).flops, 0);
}

/// Two sequences in one step: a 4-token prefill at positions 0..3 and one
/// decode token at position 9; 4 query heads over 2 KV heads of dim 8.
struct AttentionStep {
  std::vector<int64_t> positions{0, 1, 2, 3, 9}, slots{0, 1, 2, 3, 25};
  std::vector<int64_t> queryEnds{4, 5};
  std::vector<int32_t> tables{0, 1};
  std::vector<Attr> attrs{intAttr("layer", 0), intAttr("num_heads", 4),
                          intAttr("num_kv_heads", 2), intAttr("head_dim", 8)};

  cpu::KernelContext context(const std::string &kernel, bool named) {
    cpu::KernelContext ctx(kernel, "layers.0.attn", &attrs, nullptr);
    const std::string p = named ? "positions" : "",
                      e = named ? "query_ends" : "";
    ctx.inputs = {operand(DType::F32, {5, 32}),
                  operand(DType::F32, {5, 16}),
                  operand(DType::F32, {5, 16}),
                  operand(DType::I64, {5}, positions.data(), p),
                  operand(DType::I64, {5}, slots.data()),
                  operand(DType::I32, {2, 1}, tables.data()),
                  operand(DType::I64, {2}, queryEnds.data(), e)};
    ctx.outputs = {result(DType::F32, {5, 32})};
    return ctx;
  }
};

TEST(KernelCost, PagedAttentionReadsEachSequencesContext) {
  AttentionStep step;
  // Operands once: q 640, k 320, v 320, positions 40, slots 40, tables 8,
  // query_ends 16, out 640.
  const double operands = 640 + 320 + 320 + 40 + 40 + 8 + 16 + 640;
  const double row = 2 * 8 * 4; // one token's K (or V) for both KV heads
  // K+V read: 4 rows for the prefill, 10 for the decode; K+V written: 5.
  const double bytes = operands + 2 * row * (4 + 10) + 2 * row * 5;
  // 4·heads·D per token and context position: contexts 1+2+3+4 and 10.
  const double flops = 4.0 * 4 * 8 * (1 + 2 + 3 + 4 + 10);
  for (bool named : {true, false}) {
    const KernelCost c =
        estimateKernelCost(step.context("paged_attention", named));
    EXPECT_EQ(c.bytes, bytes) << (named ? "by name" : "by index");
    EXPECT_EQ(c.flops, flops) << (named ? "by name" : "by index");
  }
  // The fused rope variant is costed the same way.
  EXPECT_EQ(
      estimateKernelCost(step.context("rope_paged_attention", true)).flops,
      flops);
  // q, k and v as column ranges of one merged [5, 64] qkv input: each
  // column read once, not the whole input three times.
  cpu::KernelContext merged = step.context("paged_attention", true);
  for (size_t i = 0; i < 3; ++i)
    merged.inputs[i].shape = {5, 64};
  EXPECT_EQ(estimateKernelCost(merged).bytes, bytes);

  // A sliding window of 3 clips every context at 3 positions.
  step.attrs.push_back(intAttr("sliding_window", 3));
  const KernelCost w =
      estimateKernelCost(step.context("paged_attention", true));
  EXPECT_EQ(w.flops, 4.0 * 4 * 8 * (1 + 2 + 3 + 3 + 3));
  EXPECT_EQ(w.bytes, operands + 2 * row * (4 + 3) + 2 * row * 5);
}

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("ingot-profiler-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

/// x[batch, 8] -> linear(W[4, 8]) -> relu -> y[batch, 4].
std::unique_ptr<Artifact> writeTinyPlan() {
  Manifest m;
  m.modelName = "tiny", m.compilerVersion = "test", m.targets = {"cpu"};
  m.symbols = {{"batch", 4}};
  TensorEntry w;
  w.name = "w", w.shape = {4, 8};
  m.tensors = {w};
  auto buffer = [&](BufferKind k, const std::string &name,
                    std::vector<int64_t> shape) -> Buffer & {
    Buffer b;
    b.id = uint32_t(m.buffers.size()), b.kind = k, b.name = name;
    b.rank = uint32_t(shape.size()), b.maxShape = std::move(shape);
    m.buffers.push_back(b);
    return m.buffers.back();
  };
  buffer(BufferKind::Input, "x", {4, 8}).ioIndex = 0;
  buffer(BufferKind::Param, "w", {4, 8}).tensorIndex = 0;
  Buffer &h = buffer(BufferKind::Arena, "h", {4, 4});
  h.maxBytes = 64, h.arenaOffset = 0;
  Buffer &y = buffer(BufferKind::Arena, "y", {4, 4});
  y.maxBytes = 64, y.arenaOffset = 64;
  m.memory.arenaBytes = 128;
  Step lin, relu;
  lin.kernel = "linear", lin.origin = "layers.0.proj";
  lin.inputs = {0, 1}, lin.outputs = {2};
  relu.kernel = "relu", relu.origin = "layers.0.act";
  relu.inputs = {2}, relu.outputs = {3};
  m.steps = {lin, relu};
  m.inputs = {{"x", DType::F32, {{-1, "batch"}, {8, ""}}, 0}};
  m.outputs = {{"y", DType::F32, {{-1, "batch"}, {4, ""}}, 3}};

  std::vector<float> weights(32, 0.5f);
  ArtifactWriter writer(m);
  writer.setTensorProducer(0, [&](const ByteSink &sink) {
    sink(weights.data(), weights.size() * sizeof(float));
    return Status::ok();
  });
  const std::string path = tempPath("tiny.ingot");
  EXPECT_TRUE(writer.write(path).isOk());
  std::unique_ptr<Artifact> art;
  Status s = Artifact::open(path, &art);
  EXPECT_TRUE(s.isOk()) << s.message();
  std::filesystem::remove(path);
  return art;
}

TEST(StepProfiler, TraceHasOneEventPerKernelPerRun) {
  std::unique_ptr<Artifact> art = writeTinyPlan();
  ASSERT_TRUE(art);
  ThreadPool pool(1);
  Executor exec(*art, pool);
  StepProfiler profiler;
  exec.setProfiler(&profiler);
  constexpr int kRuns = 3;
  for (int r = 0; r < kRuns; ++r) {
    NamedTensor x;
    x.name = "x";
    x.tensor.shape = {r + 1, 8};
    x.tensor.data.assign(size_t(r + 1) * 8 * 4, 0);
    std::vector<NamedTensor> out;
    profiler.setNextRunLabel("decode " + std::to_string(r + 1), r + 1);
    ASSERT_TRUE(exec.run({x}, &out).isOk());
  }
  ASSERT_EQ(profiler.runs().size(), size_t(kRuns));
  const std::vector<KernelEvent> ks = profiler.kernels();
  ASSERT_EQ(ks.size(), size_t(2 * kRuns));
  for (size_t i = 0; i < ks.size(); ++i) {
    EXPECT_EQ(ks[i].run, int64_t(i / 2));
    EXPECT_EQ(ks[i].kernel, i % 2 ? "relu" : "linear");
    EXPECT_GE(ks[i].durUs, 0);
  }
  // Third run: batch 3, so linear's 2·m·n·k = 2·3·4·8.
  EXPECT_EQ(ks[4].flops, 2 * 3 * 4 * 8);

  cli::OrderedJson trace;
  std::string error = cli::parseJsonLine(profiler.chromeTraceJson(), &trace);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(trace.contains("traceEvents"));
  int kernels = 0, steps = 0;
  for (const cli::OrderedJson &e : trace["traceEvents"]) {
    if (!e.contains("cat"))
      continue;
    const std::string cat = e["cat"].get<std::string>();
    ASSERT_EQ(e["ph"], "X");
    ASSERT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("pid") &&
                e.contains("tid"));
    if (cat == "kernel") {
      ++kernels;
      EXPECT_EQ(e["args"]["origin"],
                kernels % 2 ? "layers.0.proj" : "layers.0.act");
      EXPECT_TRUE(e["args"]["GB/s"].is_number());
    } else if (cat == "step") {
      EXPECT_EQ(e["name"], "decode " + std::to_string(++steps));
    }
  }
  EXPECT_EQ(kernels, 2 * kRuns);
  EXPECT_EQ(steps, kRuns);
}

/// Sums the "% step" column of the table's rows. Names may hold spaces
/// ("(2 more)", "linear layers.*.proj"), so the numbers are found as the
/// all-numeric tail of each line: calls, total ms, % step, ...
double sumOfShares(const std::string &table, int *rows) {
  std::istringstream in(table);
  std::string line;
  std::getline(in, line); // header
  double sum = 0;
  *rows = 0;
  while (std::getline(in, line) && line.rfind("kernels:", 0) != 0) {
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    size_t first = w.size();
    while (first > 0 &&
           w[first - 1].find_first_not_of("0123456789.") == std::string::npos)
      --first;
    EXPECT_GE(w.size() - first, 6u) << line;
    if (w.size() - first >= 3)
      sum += std::stod(w[first + 2]);
    ++*rows;
  }
  return sum;
}

TEST(StepProfiler, TableSharesAddUp) {
  StepProfiler p;
  // Fed directly and without runs: shares are of the kernel time.
  const char *names[] = {"linear", "paged_attention", "rms_norm", "add"};
  for (int i = 0; i < 40; ++i) {
    KernelEvent e;
    e.kernel = names[i % 4];
    e.durUs = 10.0 * (i % 4 + 1);
    e.bytes = 1e6, e.flops = 2e6;
    p.kernel(e);
  }
  int rows = 0;
  EXPECT_NEAR(sumOfShares(p.topKernelsTable(10, 0, 0), &rows), 100.0, 0.05);
  EXPECT_EQ(rows, 4);
  // Top 2 plus one "(2 more)" row: still all of it.
  const std::string top2 = p.topKernelsTable(2, 50, 1000);
  EXPECT_NEAR(sumOfShares(top2, &rows), 100.0, 0.05);
  EXPECT_EQ(rows, 3);
  EXPECT_NE(top2.find("add"), std::string::npos) << "largest total first";
  EXPECT_NE(top2.find("% BW"), std::string::npos);
  EXPECT_NE(top2.find("(2 more)"), std::string::npos);
  EXPECT_EQ(p.topKernelsTable(2, 0, 0).find("% BW"), std::string::npos);
}

TEST(StepProfiler, TableSharesOfStepTimeMatchTheFooter) {
  std::unique_ptr<Artifact> art = writeTinyPlan();
  ASSERT_TRUE(art);
  ThreadPool pool(1);
  Executor exec(*art, pool);
  StepProfiler p;
  exec.setProfiler(&p);
  NamedTensor x;
  x.name = "x", x.tensor.shape = {4, 8}, x.tensor.data.assign(128, 0);
  std::vector<NamedTensor> out;
  for (int r = 0; r < 5; ++r)
    ASSERT_TRUE(exec.run({x}, &out).isOk());
  const std::string table = p.topKernelsTable(15, 0, 0, /*byOrigin=*/false);
  int rows = 0;
  const double sum = sumOfShares(table, &rows);
  EXPECT_EQ(rows, 2);
  const size_t at = table.find("ms in 10 calls = ");
  ASSERT_NE(at, std::string::npos) << table;
  const double covered = std::stod(table.substr(at + 17));
  EXPECT_NEAR(sum, covered, 0.02 * 2 + 1e-9) << table; // rounding per row
  EXPECT_LE(covered, 100.0 + 1e-9);

  const std::string grouped = p.topKernelsTable(15, 0, 0, /*byOrigin=*/true);
  EXPECT_NE(grouped.find("linear layers.*.proj"), std::string::npos) << grouped;
}

} // namespace
