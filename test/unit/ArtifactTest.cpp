//===- ArtifactTest.cpp - Writer, loader and corruption handling ----------===//
#include "ArtifactFormat.h"
#include "Checksum.h"
#include "SampleArtifact.h"

#include <dirent.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

using namespace ingot;
using namespace ingot::testing;

namespace {

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  DIR *d = opendir(dir.c_str());
  while (dirent *e = d ? readdir(d) : nullptr)
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
      names.push_back(e->d_name);
  if (d)
    closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class ArtifactTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ingot-artifact-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const std::string &n : listDir(dir_))
      unlink((dir_ + "/" + n).c_str());
    rmdir(dir_.c_str());
  }
  std::string path(const std::string &name) { return dir_ + "/" + name; }

  /// Writes the sample artifact and returns its bytes.
  std::vector<uint8_t> writeSample(const std::string &name) {
    Status st = sampleWriter(sampleManifest()).write(path(name));
    EXPECT_TRUE(st) << st.message();
    return readFile(path(name));
  }

  /// open() must refuse `bytes` with a message that starts with the path.
  void expectRefused(const std::vector<uint8_t> &bytes, const std::string &what,
                     const std::string &needle = "") {
    std::string p = path("mutant.ingot");
    writeFile(p, bytes);
    std::unique_ptr<Artifact> art;
    Status st = Artifact::open(p, &art);
    ASSERT_FALSE(st) << what << " was accepted";
    EXPECT_EQ(art, nullptr);
    EXPECT_EQ(st.message().rfind(p + ": ", 0), 0u) << st.message();
    EXPECT_GT(st.message().size(), p.size() + 2);
    if (!needle.empty()) {
      EXPECT_NE(st.message().find(needle), std::string::npos)
          << what << ": " << st.message();
    }
  }

  std::string dir_;
};

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
  v[8] = 2;
  expectRefused(v, "version 2",
                "format version 2, this runtime reads 1: recompile");
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
       [](Manifest &m) {
         m.tensors[0].shape = {int64_t(1) << 40, 1 << 30};
       },
       true},
      {"output 0 'y' is buffer 6 of 6",
       [](Manifest &m) { m.outputs[0].buffer = 6; }},
      {"dim 0 has size -2",
       [](Manifest &m) {
         m.inputs[0].dims[0] = {-2, ""};
       }},
      {"no kernel name", [](Manifest &m) { m.steps[1].kernel.clear(); }},
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
