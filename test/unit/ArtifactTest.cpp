//===- ArtifactTest.cpp - Writing and loading artifacts -------------------===//
//
// Round trips through ArtifactWriter and Artifact::open, and writes that fail
// without touching the destination. Files the loader must refuse are tested
// in ArtifactCorruptionTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "ArtifactTestFixture.h"

using namespace ingot;
using namespace ingot::testing;

namespace {

TEST_F(ArtifactTest, WriteThenOpenRoundTrips) {
  Manifest m = sampleManifest();
  writeSample("a.ingot");
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path("a.ingot"), &art);
  ASSERT_TRUE(st) << st.message();
  const Manifest &got = art->manifest();

  // The writer fills offsets, sizes and the weight total; all else is as given.
  uint64_t cursor = 0;
  for (TensorEntry &t : m.tensors) {
    t.bytes = numelBytes(t);
    t.offset = (cursor + 63) / 64 * 64;
    cursor = t.offset + t.bytes;
  }
  m.memory.weightsBytes = cursor;
  expectSameManifest(m, got);

  for (size_t i = 0; i < got.tensors.size(); ++i) {
    const uint8_t *data = art->tensorData(i);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u) << "tensor " << i;
    for (uint64_t k = 0; k < got.tensors[i].bytes; ++k)
      ASSERT_EQ(data[k], sampleByte(i, k)) << "tensor " << i << " byte " << k;
  }
  EXPECT_EQ(art->tensorData(got.tensors.size()), nullptr);

  const auto &secs = art->sections();
  ASSERT_EQ(secs.size(), 3u);
  EXPECT_EQ(secs[0].name, "manifest");
  EXPECT_EQ(secs[1].name, "weights");
  EXPECT_EQ(secs[2].name, "code.cpu");
  EXPECT_EQ(secs[0].offset % 64, 0u);
  EXPECT_EQ(secs[1].offset % 4096, 0u);
  EXPECT_EQ(secs[1].size, cursor);
  EXPECT_EQ(secs[2].size, 5u);
  EXPECT_EQ(art->fileSize(), secs[2].offset + secs[2].size);
  std::vector<uint8_t> bytes = readFile(path("a.ingot"));
  EXPECT_EQ(bytes[secs[2].offset + 4], 5);
}

TEST_F(ArtifactTest, OutputIsDeterministic) {
  std::vector<uint8_t> a = writeSample("one.ingot");
  std::vector<uint8_t> b = writeSample("two-with-a-longer-name.ingot");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST_F(ArtifactTest, EmptyModelIsValid) {
  Manifest m;
  m.compilerVersion = "x";
  ASSERT_TRUE(ArtifactWriter(m).write(path("e.ingot")));
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path("e.ingot"), &art);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(art->sections()[1].size, 0u);
}

// Shaped like compiler/PlanToManifest.cpp output: unnamed dynamic dims,
// input buffers without max_shape, memory totals filled in by the compiler.
TEST_F(ArtifactTest, CompilerStyleManifestIsAccepted) {
  Manifest m = sampleManifest();
  m.outputs[0].dims[0] = {-1, "?"};
  m.inputs[1].dims[0] = {-1, ""};
  m.buffers[0].maxShape.clear(), m.buffers[0].maxBytes = 0;
  m.memory.weightsBytes = 93;
  m.memory.overheadBytes = encodeManifest(m).size();
  ASSERT_TRUE(sampleWriter(m).write(path("c.ingot")));
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path("c.ingot"), &art);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(art->manifest().outputs[0].dims[0].symbol, "?");
  // The writer states the weight section's real size, padding included.
  EXPECT_EQ(art->manifest().memory.weightsBytes, art->sections()[1].size);
}

TEST_F(ArtifactTest, LargeTensorStreamsThroughInChunks) {
  Manifest m;
  TensorEntry t;
  t.name = "big", t.dtype = DType::U8, t.shape = {3 * 1024 * 1024 + 5};
  m.tensors = {t, t};
  ArtifactWriter w(m);
  for (size_t i = 0; i < 2; ++i)
    w.setTensorProducer(i, [i](const ByteSink &sink) {
      // Chunks larger than the writer's buffer, then small ones.
      std::vector<uint8_t> chunk(1536 * 1024);
      uint64_t k = 0, total = 3 * 1024 * 1024 + 5;
      while (k < total) {
        size_t n = std::min<uint64_t>(i ? 1000 : chunk.size(), total - k);
        for (size_t j = 0; j < n; ++j)
          chunk[j] = sampleByte(i, k + j);
        sink(chunk.data(), n);
        k += n;
      }
      return Status::ok();
    });
  ASSERT_TRUE(w.write(path("big.ingot")));
  std::unique_ptr<Artifact> art;
  ASSERT_TRUE(Artifact::open(path("big.ingot"), &art));
  for (size_t i = 0; i < 2; ++i)
    for (uint64_t k = 0; k < art->manifest().tensors[i].bytes; k += 4099)
      ASSERT_EQ(art->tensorData(i)[k], sampleByte(i, k));
}

TEST_F(ArtifactTest, FailedWriteLeavesDestinationUntouched) {
  Manifest m = sampleManifest();
  writeFile(path("keep.ingot"), {'o', 'l', 'd'});
  struct Case {
    const char *what;
    TensorProducer producer;
    const char *needle;
  } cases[] = {
      {"producer error",
       [](const ByteSink &) { return Status::error("disk on fire"); },
       "tensor 'idx': disk on fire"},
      {"short producer",
       [](const ByteSink &sink) {
         uint8_t b[3] = {};
         sink(b, 3);
         return Status::ok();
       },
       "tensor 'idx': producer emitted 3 bytes, expected 32"},
      {"long producer",
       [](const ByteSink &sink) {
         uint8_t b[40] = {};
         sink(b, 40);
         return Status::ok();
       },
       "tensor 'idx': producer emitted 40 bytes, expected 32"},
      {"missing producer", nullptr, "tensor 'idx' has no data producer"},
  };
  for (const Case &c : cases) {
    for (const char *dest : {"keep.ingot", "new.ingot"}) {
      ArtifactWriter w = sampleWriter(m);
      w.setTensorProducer(2, c.producer);
      Status st = w.write(path(dest));
      ASSERT_FALSE(st) << c.what;
      EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();
      EXPECT_EQ(st.message().rfind(path(dest), 0), 0u) << st.message();
      EXPECT_EQ(readFile(path("keep.ingot")),
                std::vector<uint8_t>({'o', 'l', 'd'}));
      EXPECT_EQ(listDir(dir_), std::vector<std::string>{"keep.ingot"})
          << c.what;
    }
  }
  // A bad index, an invalid manifest and an unlisted target fail the same way.
  ArtifactWriter w = sampleWriter(m);
  w.setTensorProducer(99, nullptr);
  EXPECT_FALSE(w.write(path("new.ingot")));
  Manifest bad = m;
  bad.steps[0].outputs = {2};
  Status st = sampleWriter(bad).write(path("new.ingot"));
  EXPECT_NE(st.message().find("read-only"), std::string::npos) << st.message();
  ArtifactWriter gpu = sampleWriter(m);
  gpu.addCodeSection("cuda:sm_90", {});
  EXPECT_FALSE(gpu.write(path("new.ingot")));
  EXPECT_FALSE(sampleWriter(m).write(dir_ + "/no/such/dir/x.ingot"));
  EXPECT_EQ(listDir(dir_), std::vector<std::string>{"keep.ingot"});
}

} // namespace
