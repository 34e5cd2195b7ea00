//===- ArtifactCorruptionTest.cpp - Files the loader must refuse ----------===//
//
// Truncations, byte flips, bad versions and trailing bytes, manifests
// mutated and resealed with valid checksums, and manifests that break the
// structural checks: Artifact::open refuses each with a message naming the
// file, and never crashes. Same suite as ArtifactTest.cpp, split out of it.
//
//===----------------------------------------------------------------------===//
#include "ArtifactTestFixture.h"
#include "ingot/ArtifactFormat.h"
#include "ingot/Checksum.h"

using namespace ingot;
using namespace ingot::testing;

namespace {

TEST_F(ArtifactTest, RefusesWithClearMessages) {
  std::vector<uint8_t> good = writeSample("a.ingot");
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path("missing.ingot"), &art);
  EXPECT_EQ(st.message(),
            path("missing.ingot") + ": No such file or directory");
  expectRefused({}, "empty file", "empty file");
  expectRefused({'h', 'e', 'l', 'l', 'o', '\n', 0, 0, 0, 0, 0, 0, 0,
                 0,   0,   0,   0,   0,   0,    0, 0, 0, 0, 0, 0},
                "text", "not an ingot artifact");
  std::vector<uint8_t> v = good;
  v[8] = 1; // an artifact from before the manifest was a FlatBuffer
  expectRefused(v, "version 1",
                "this artifact was written by format version 1; this runtime "
                "reads version 4: recompile it with this ingot");
  v[8] = 2; // one string per vocabulary token
  expectRefused(v, "version 2",
                "written by format version 2; this runtime reads version 4");
  v[8] = 3; // "q16" q8 values stored without their + 128
  expectRefused(v, "version 3",
                "written by format version 3; this runtime reads version 4");
  v[8] = 5;
  expectRefused(v, "version 5",
                "written by format version 5; this runtime reads version 4");
  std::unique_ptr<Artifact> ok;
  ASSERT_TRUE(Artifact::open(path("a.ingot"), &ok));
  v = good;
  v[ok->sections()[2].offset + 2] ^= 1;
  expectRefused(v, "code flip", "checksum mismatch in section 'code.cpu'");
  v = good;
  v[ok->sections()[1].offset - 1] ^= 1;
  expectRefused(v, "padding flip", "nonzero padding byte");
  v = good;
  v[ok->sections()[1].offset + 70] ^= 0x10;
  expectRefused(
      v, "weights flip",
      "checksum mismatch in section 'weights': the file is corrupted");
  v = good;
  v[40] ^= 1;
  expectRefused(v, "header flip", "checksum mismatch in the header");
  v = good;
  v.push_back(0);
  expectRefused(v, "trailing byte", "trailing bytes");
  v.assign(good.begin(), good.end() - 1);
  expectRefused(v, "truncated", "truncated");
}

TEST_F(ArtifactTest, EveryTruncationIsRefused) {
  std::vector<uint8_t> good = writeSample("a.ingot");
  ASSERT_LT(good.size(), 64u * 1024) << "keep the sample small";
  for (size_t len = 0; len < good.size(); ++len)
    expectRefused(std::vector<uint8_t>(good.begin(), good.begin() + len),
                  "truncation to " + std::to_string(len));
}

TEST_F(ArtifactTest, EveryByteFlipIsRefused) {
  std::vector<uint8_t> good = writeSample("a.ingot");
  for (size_t pos = 0; pos < good.size(); ++pos)
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> v = good;
      v[pos] ^= mask;
      expectRefused(v, "flip at " + std::to_string(pos));
      if (HasFatalFailure())
        return;
    }
}

/// Re-seals a mutated manifest with valid checksums, so that mutations reach
/// the manifest decoder and the structural checks instead of the checksums.
std::vector<uint8_t> reseal(std::vector<uint8_t> v) {
  std::string cv;
  std::vector<format::SectionRecord> secs;
  Status st = format::parseHeader(v.data(), v.size(), &cv, &secs);
  EXPECT_TRUE(st) << st.message();
  for (format::SectionRecord &s : secs)
    s.checksum = checksum64(v.data() + s.offset, s.size);
  std::vector<uint8_t> h = format::encodeHeader(cv, secs);
  std::copy(h.begin(), h.end(), v.begin());
  return v;
}

TEST_F(ArtifactTest, ResealedManifestMutationsNeverCrash) {
  std::vector<uint8_t> good = writeSample("a.ingot");
  std::unique_ptr<Artifact> ok;
  ASSERT_TRUE(Artifact::open(path("a.ingot"), &ok));
  const Artifact::SectionInfo man = ok->sections()[0];
  int accepted = 0, refused = 0;
  for (uint64_t pos = man.offset; pos < man.offset + man.size; ++pos)
    for (uint8_t mask : {0x01, 0x04, 0x40, 0x80, 0xff}) {
      std::vector<uint8_t> v = good;
      v[pos] ^= mask;
      writeFile(path("m.ingot"), reseal(v));
      std::unique_ptr<Artifact> art;
      Status st = Artifact::open(path("m.ingot"), &art);
      if (!st) {
        ++refused;
        EXPECT_FALSE(st.message().empty());
        continue;
      }
      ++accepted; // e.g. a changed name: still structurally sound
      const Manifest &m = art->manifest();
      for (size_t i = 0; i < m.tensors.size(); ++i)
        EXPECT_LE(art->tensorData(i) + m.tensors[i].bytes - art->tensorData(0),
                  int64_t(art->sections()[1].size));
    }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

TEST_F(ArtifactTest, LoaderChecksManifestStructure) {
  struct Case {
    const char *needle;
    void (*mutate)(Manifest &);
    // The writer recomputes tensor offsets and sizes, so tensor defects can
    // only be checked on the validator itself.
    bool tensorDefect = false;
  } cases[] = {
      {"buffer 3 'b' has id 9", [](Manifest &m) { m.buffers[3].id = 9; }},
      {"input 1 is buffer 17 of 6",
       [](Manifest &m) { m.steps[0].inputs[1] = 17; }},
      {"output 0 writes to a read-only",
       [](Manifest &m) { m.steps[1].outputs[0] = 0; }},
      {"refers to tensor 6 of 6",
       [](Manifest &m) { m.buffers[2].tensorIndex = 6; }},
      {"refers to input -1", [](Manifest &m) { m.buffers[1].ioIndex = -1; }},
      {"lies outside the 256-byte arena",
       [](Manifest &m) { m.buffers[5].arenaOffset = 192; }},
      {"lies outside the 256-byte arena",
       [](Manifest &m) { m.buffers[5].maxBytes = ~uint64_t(0) - 64; }},
      {"needs 96 bytes, slice has 95",
       [](Manifest &m) { m.buffers[4].maxBytes = 95; }},
      {"is 47 bytes but its shape and dtype need 48",
       [](Manifest &m) { m.tensors[0].bytes = 47; }, true},
      {"lies outside the", [](Manifest &m) { m.tensors[5].offset = 1u << 20; },
       true},
      {"invalid shape",
       [](Manifest &m) { m.tensors[0].shape = {int64_t(1) << 40, 1 << 30}; },
       true},
      {"output 0 'y' is buffer 6 of 6",
       [](Manifest &m) { m.outputs[0].buffer = 6; }},
      {"dim 0 has size -2",
       [](Manifest &m) { m.inputs[0].dims[0] = {-2, ""}; }},
      {"no kernel name", [](Manifest &m) { m.steps[1].kernel.clear(); }},
      // A layout from a newer compiler would be read as another.
      {"unknown weight layout \"packed-4x\"",
       [](Manifest &m) { m.tensors[2].layout = "packed-4x"; }},
      {"q16 holds q8, q4 or q4m, not float32",
       [](Manifest &m) { m.tensors[0].layout = "q16"; }},
  };
  for (const Case &c : cases) {
    Manifest m = sampleManifest();
    uint64_t weights = 0;
    ASSERT_TRUE(format::layOutTensors(&m, &weights));
    c.mutate(m);
    Status st = format::validateManifest(m, weights);
    ASSERT_FALSE(st) << c.needle;
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();

    // Defects the writer does not recompute, written without its checks:
    // open() must refuse them too.
    if (c.tensorDefect)
      continue;
    std::vector<TensorProducer> producers;
    for (size_t i = 0; i < m.tensors.size(); ++i)
      producers.push_back(sampleProducer(i, m.tensors[i].bytes));
    std::string p = path("raw.ingot");
    st = format::writeArtifactFile(p, m, producers, {}, /*validate=*/false);
    ASSERT_TRUE(st) << st.message();
    std::unique_ptr<Artifact> art;
    st = Artifact::open(p, &art);
    ASSERT_FALSE(st) << c.needle;
    EXPECT_EQ(st.message().rfind(p + ": invalid manifest: ", 0), 0u)
        << st.message();
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();
  }
}

} // namespace
