//===- GpuTargetTest.cpp - GPU kernel tables and code sections ------------===//
//
// The runtime will launch exactly what a GPU target's table says, so every
// way of pointing it outside the plan or the file is refused when written
// and when loaded: steps, operands and axes that do not exist, launches no
// GPU accepts, code objects outside their section, sections nobody names,
// and names that would escape a directory when `inspect --extract-code`
// uses them as file names.
//
//===----------------------------------------------------------------------===//
#include "ArtifactTestFixture.h"

#include "ingot/ArtifactFormat.h"

#include <functional>

using namespace ingot;
using namespace ingot::testing;

namespace {

/// The sample plan with a CUDA kernel for step 1 (linear: inputs 4, 3
/// and an absent optional, output 5), and a 200-byte code section holding
/// a "cubin" at 0 and a "ptx" at 128.
Manifest gpuManifest() {
  Manifest m = sampleManifest();
  m.targets = {"cpu", "cuda:sm_90"};
  GpuTarget t;
  t.name = "cuda";
  t.objects = {{"sm_90", CodeObject::Format::Cubin, 0, 100},
               {"sm_90", CodeObject::Format::Ptx, 128, 72}};
  GpuKernel k;
  k.step = 1, k.symbol = "ingot_s1_add", k.blockX = 256, k.gridOperand = 3;
  using K = GpuArg::Kind;
  k.args = {
      {K::Pointer, 0, 0},        {K::Pointer, 1, 0}, {K::Pointer, 3, 0},
      {K::Numel, 3, 0},          {K::Dim, 3, 1},     {K::BroadcastStride, 1, 0},
      {K::BroadcastStride, 0, 1}};
  t.kernels = {k};
  m.gpuTargets = {t};
  return m;
}

std::vector<uint8_t> codeBytes() {
  std::vector<uint8_t> code(200);
  for (size_t i = 0; i < code.size(); ++i)
    code[i] = uint8_t(i * 7 + 3);
  return code;
}

const std::vector<std::pair<std::string, uint64_t>> kSections = {{"cpu", 0},
                                                                 {"cuda", 200}};

Status validate(
    const Manifest &m,
    const std::vector<std::pair<std::string, uint64_t>> &sections = kSections) {
  uint64_t weights = 0;
  Manifest laid = m;
  if (Status s = format::layOutTensors(&laid, &weights); !s)
    return s;
  if (Status s = format::validateManifest(laid, weights); !s)
    return s;
  return format::validateCodeSections(laid, sections);
}

void expectRefused(const std::function<void(Manifest &)> &edit,
                   const std::string &needle) {
  Manifest m = gpuManifest();
  edit(m);
  Status s = validate(m);
  ASSERT_FALSE(s) << "accepted; expected: " << needle;
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
}

TEST(GpuTargetTest, TheSampleTableIsValid) {
  Status s = validate(gpuManifest());
  EXPECT_TRUE(s) << s.message();
}

TEST(GpuTargetTest, KernelsMustNameRealSteps) {
  expectRefused([](Manifest &m) { m.gpuTargets[0].kernels[0].step = 2; },
                "is for step 2 of 2");
  expectRefused(
      [](Manifest &m) {
        GpuKernel earlier = m.gpuTargets[0].kernels[0];
        earlier.step = 0;
        m.gpuTargets[0].kernels.push_back(earlier);
      },
      "steps must not descend");
  expectRefused([](Manifest &m) { m.gpuTargets[0].kernels[0].symbol = ""; },
                "has no symbol");
}

TEST(GpuTargetTest, AStepMayTakeSeveralKernelsInOrder) {
  // Paged attention writes the cache with one kernel, then reads it.
  Manifest m = gpuManifest();
  GpuKernel second = m.gpuTargets[0].kernels[0];
  second.symbol = "ingot_s1_add_part2";
  second.grid = {{3, 64, 1}, {GpuGridDim::kGridConstant, 1, 5}};
  m.gpuTargets[0].kernels.push_back(second);
  Status s = validate(m);
  EXPECT_TRUE(s) << s.message();
}

TEST(GpuTargetTest, GridDimensionsMustNameOperandsOrBlocks) {
  auto grid = [](std::vector<GpuGridDim> g) {
    return [g](Manifest &m) { m.gpuTargets[0].kernels[0].grid = g; };
  };
  const uint32_t kConst = GpuGridDim::kGridConstant;
  expectRefused(grid({{kConst, 1, 0}}), "a grid dimension of no blocks");
  expectRefused(grid({{3, 0, 1}}), "a grid dimension of no blocks");
  expectRefused(grid({{2, 4, 1}}), "sized by a missing operand");
  expectRefused(grid({{9, 4, 1}}), "sized by a missing operand");
  expectRefused(grid({{3, 1, 1}, {3, 1, 1}, {3, 1, 1}, {3, 1, 1}}),
                "more than 3 dimensions");
}

TEST(GpuTargetTest, KvCacheArgumentsNeedAModelLayer) {
  // The sample plan is not a language model: it has no KV cache at all.
  expectRefused(
      [](Manifest &m) {
        m.gpuTargets[0].kernels[0].args[0] = {GpuArg::Kind::KvKeys, 0, 0};
      },
      "names the KV cache of layer 0, which the model lacks");
}

TEST(GpuTargetTest, LaunchesMustFitAGpu) {
  expectRefused([](Manifest &m) { m.gpuTargets[0].kernels[0].blockX = 0; },
                "0 threads per block");
  expectRefused([](Manifest &m) { m.gpuTargets[0].kernels[0].blockX = 2048; },
                "2048 threads per block");
  expectRefused(
      [](Manifest &m) { m.gpuTargets[0].kernels[0].sharedBytes = 1 << 20; },
      "bytes of shared memory");
  expectRefused([](Manifest &m) { m.gpuTargets[0].kernels[0].gridOperand = 4; },
                "sizes its grid by a missing operand");
  // Operand 2 is the absent optional of sample_add.
  expectRefused([](Manifest &m) { m.gpuTargets[0].kernels[0].gridOperand = 2; },
                "sizes its grid by a missing operand");
}

TEST(GpuTargetTest, ArgumentsMustNameOperandsAndAxes) {
  auto arg = [](size_t i, GpuArg a) {
    return [i, a](Manifest &m) { m.gpuTargets[0].kernels[0].args[i] = a; };
  };
  using K = GpuArg::Kind;
  expectRefused(arg(0, {K::Pointer, 4, 0}), "names operand 4 of 4");
  expectRefused(arg(0, {K::Pointer, 2, 0}), "names an absent operand");
  expectRefused(arg(4, {K::Dim, 3, 2}), "names axis 2 of a rank-2 operand");
  expectRefused(arg(5, {K::BroadcastStride, 3, 0}),
                "a broadcast stride is of an input");
  // Input 1 (buffer 3) is rank 1, but strides run over the output's axes.
  expectRefused(arg(5, {K::BroadcastStride, 1, 2}),
                "names axis 2 of a rank-2 operand");
}

TEST(GpuTargetTest, CodeObjectsMustLieInTheirSection) {
  expectRefused([](Manifest &m) { m.gpuTargets[0].objects[1].bytes = 73; },
                "code object for sm_90 lies outside its code section");
  expectRefused(
      [](Manifest &m) { m.gpuTargets[0].objects[1].offset = ~uint64_t(0); },
      "lies outside its code section");
  expectRefused([](Manifest &m) { m.gpuTargets[0].objects.clear(); },
                "has no code objects");
  expectRefused([](Manifest &m) { m.gpuTargets[0].objects[0].bytes = 0; },
                "has an empty code object");

  Status s = validate(gpuManifest(), {{"cpu", 0}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("GPU target 'cuda' has no code section"),
            std::string::npos)
      << s.message();
  s = validate(gpuManifest(), {{"cpu", 0}, {"cuda", 200}, {"hip", 8}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("code section for target 'hip', which the "
                             "manifest does not list"),
            std::string::npos)
      << s.message();
}

TEST(GpuTargetTest, NamesCannotEscapeADirectory) {
  for (const char *bad : {"../../etc/x", "a/b", "", "sm 90", "x\n"}) {
    expectRefused([&](Manifest &m) { m.gpuTargets[0].objects[0].arch = bad; },
                  "arch is not letters, digits and '_'");
    expectRefused([&](Manifest &m) { m.gpuTargets[0].name = bad; },
                  "named with other than letters, digits and '_'");
  }
  expectRefused([](Manifest &m) { m.gpuTargets.push_back(m.gpuTargets[0]); },
                "listed twice");
}

class GpuArtifactTest : public ArtifactTest {};

TEST_F(GpuArtifactTest, CodeObjectsRoundTripThroughTheFile) {
  ArtifactWriter w = sampleWriter(gpuManifest());
  w.addCodeSection("cuda", codeBytes()); // sampleWriter added "cpu"
  Status st = w.write(path("gpu.ingot"));
  ASSERT_TRUE(st) << st.message();
  std::unique_ptr<Artifact> art;
  st = Artifact::open(path("gpu.ingot"), &art);
  ASSERT_TRUE(st) << st.message();
  const Manifest &m = art->manifest();
  expectSameGpuTargets(gpuManifest(), m);
  const std::vector<uint8_t> code = codeBytes();
  for (const CodeObject &c : m.gpuTargets[0].objects) {
    const uint8_t *data = art->codeObjectData(m.gpuTargets[0], c);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(0, std::memcmp(data, code.data() + c.offset, c.bytes));
  }
}

TEST_F(GpuArtifactTest, WriterRefusesATableWithoutItsSection) {
  ArtifactWriter w = sampleWriter(gpuManifest());
  w.addCodeSection("cuda", std::vector<uint8_t>(64));
  Status st = w.write(path("short.ingot"));
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("lies outside its code section"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(listDir(path("")).empty()) << "a file or temp file was left";
}

} // namespace
