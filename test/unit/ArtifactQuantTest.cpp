//===- ArtifactQuantTest.cpp - Quantised tensors in the artifact ----------===//
//
// A quantised weight (ingot/Quant.h) survives the writer and the loader
// with its dtype, logical shape, group size and block bytes, and the
// validator refuses the manifests that would let a kernel read past a
// tensor: a quantised dtype on an activation, a buffer whose dtype or shape
// disagrees with its tensor, a group size that is missing or misplaced.
//
//===----------------------------------------------------------------------===//

#include "ArtifactTestFixture.h"
#include "ingot/ArtifactFormat.h"
#include "ingot/Quant.h"

using namespace ingot;
using namespace ingot::testing;

namespace {

/// The sample manifest plus a q8 [4, 72] weight (groups 32, 32, 8) read
/// by a param buffer of the same dtype and shape.
Manifest withQuantisedWeight() {
  Manifest m = sampleManifest();
  TensorEntry t;
  t.name = "proj@q8g32", t.dtype = DType::Q8, t.shape = {4, 72};
  t.groupSize = 32;
  m.tensors.push_back(t);
  Buffer b;
  b.id = uint32_t(m.buffers.size()), b.kind = BufferKind::Param;
  b.dtype = DType::Q8, b.rank = 2, b.maxShape = {4, 72};
  b.tensorIndex = int32_t(m.tensors.size() - 1), b.name = "proj";
  m.buffers.push_back(b);
  return m;
}

TEST_F(ArtifactTest, QuantisedTensorRoundTrips) {
  Manifest m = withQuantisedWeight();
  uint64_t weights = 0;
  ASSERT_TRUE(format::layOutTensors(&m, &weights));
  m.memory.weightsBytes = weights;
  const TensorEntry &t = m.tensors.back();
  EXPECT_EQ(t.bytes, uint64_t(4 * (34 + 34 + 10)));
  ArtifactWriter w(m);
  for (size_t i = 0; i < m.tensors.size(); ++i)
    w.setTensorProducer(i, sampleProducer(i, m.tensors[i].bytes));
  ASSERT_TRUE(w.write(path("q.ingot")));
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path("q.ingot"), &art);
  ASSERT_TRUE(st) << st.message();
  expectSameManifest(m, art->manifest());
  EXPECT_EQ(art->manifest().tensors.back().groupSize, 32);
}

TEST_F(ArtifactTest, ValidatorRefusesInconsistentQuantisedTensors) {
  struct Case {
    const char *needle;
    void (*mutate)(Manifest &);
  } cases[] = {
      {"or group size 0 for q8",
       [](Manifest &m) { m.tensors.back().groupSize = 0; }},
      {"invalid shape [288] or group size 32 for q8",
       [](Manifest &m) {
         m.tensors.back().shape = {288};
         m.buffers.back().maxShape = {288};
         m.buffers.back().rank = 1;
       }},
      {"or group size 32 for float32",
       [](Manifest &m) { m.tensors[0].groupSize = 32; }},
  };
  for (const Case &c : cases) {
    Manifest m = withQuantisedWeight();
    c.mutate(m);
    uint64_t weights = 0;
    Status st = format::layOutTensors(&m, &weights);
    ASSERT_FALSE(st) << c.needle;
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();
  }
  struct BufferCase {
    const char *needle;
    void (*mutate)(Manifest &);
  } buffers[] = {
      {"is q8 [4, 72] but its tensor is float32 [4, 3]",
       [](Manifest &m) { m.buffers.back().tensorIndex = 0; }},
      // An f32 view needs more bytes than the blocks hold.
      {"max_shape [4, 72] is larger than its tensor",
       [](Manifest &m) { m.buffers.back().dtype = DType::F32; }},
      {"is float16 [4, 36] but its tensor is q8 [4, 72]",
       [](Manifest &m) {
         m.buffers.back().dtype = DType::F16;
         m.buffers.back().maxShape = {4, 36};
       }},
      {"is q8 [2, 72] but its tensor is q8 [4, 72]",
       [](Manifest &m) { m.buffers.back().maxShape = {2, 72}; }},
      {"'h' is q4: only weights may be quantised",
       [](Manifest &m) { m.buffers[4].dtype = DType::Q4; }},
  };
  for (const BufferCase &c : buffers) {
    Manifest m = withQuantisedWeight();
    uint64_t weights = 0;
    ASSERT_TRUE(format::layOutTensors(&m, &weights));
    c.mutate(m);
    Status st = format::validateManifest(m, weights);
    ASSERT_FALSE(st) << c.needle;
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();
  }
}

} // namespace
