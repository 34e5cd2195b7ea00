//===- ExternalWeightsTest.cpp - Weights made at load from safetensors ----===//
//
// The sample artifact with its f32 weight "w" [4, 3] kept outside: made at
// load from a safetensors file this test writes, through each kind of part
// (whole, rows, columns, 1 + w, two parts concatenated), compared with the
// values computed here. Then what the writer and loader refuse: manifests
// whose sources are not safe to resolve, and --weights on the wrong
// artifact. The end-to-end checks (same logits as an embedded artifact,
// mismatching weight files) are test/e2e/test_external_weights.py.
//
//===----------------------------------------------------------------------===//
#include "ArtifactTestFixture.h"

#include <cmath>
#include <map>

using namespace ingot;
using namespace ingot::testing;

namespace {

/// A safetensors file of f32 tensors, written byte by byte.
void writeSafetensors(
    const std::string &path,
    const std::map<std::string,
                   std::pair<std::vector<int64_t>, std::vector<float>>>
        &tensors) {
  std::string header = "{";
  std::vector<uint8_t> data;
  for (const auto &[name, t] : tensors) {
    const uint64_t begin = data.size();
    const auto *p = reinterpret_cast<const uint8_t *>(t.second.data());
    data.insert(data.end(), p, p + 4 * t.second.size());
    std::string shape;
    for (int64_t d : t.first)
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name +
              "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(begin) + "," +
              std::to_string(data.size()) + "]}";
  }
  header += "}";
  std::vector<uint8_t> file(8);
  for (int i = 0; i < 8; ++i)
    file[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  file.insert(file.end(), header.begin(), header.end());
  file.insert(file.end(), data.begin(), data.end());
  writeFile(path, file);
}

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = start + 0.25f * float(i);
  return v;
}

class ExternalWeightsTest : public ArtifactTest {
protected:
  /// The sample manifest with "w" [4, 3] made from `parts` of the source
  /// tensors "a" [6, 3] and "b" [4, 5] in model.safetensors.
  Manifest externalManifest(std::vector<std::string> parts,
                            int64_t concatAxis = 0) {
    Manifest m = sampleManifest();
    TensorEntry &w = m.tensors[0];
    w.external = true;
    w.transform.parts = std::move(parts);
    w.transform.concatAxis = concatAxis;
    m.externalWeights.files = {"model.safetensors"};
    m.externalWeights.tensors = {{"a", 0, "F32", {6, 3}},
                                 {"b", 0, "F32", {4, 5}}};
    return m;
  }
  void writeSources() {
    writeSafetensors(
        path("model.safetensors"),
        {{"a", {{6, 3}, iota(18, 1)}}, {"b", {{4, 5}, iota(20, -3)}}});
  }
  /// Writes `m` as e.ingot and opens it with the weights in this directory.
  std::vector<float> loadW(const Manifest &m) {
    EXPECT_TRUE(sampleWriter(m).write(path("e.ingot")));
    writeSources();
    std::unique_ptr<Artifact> art;
    Status st = Artifact::open(path("e.ingot"), &art, {dir_});
    EXPECT_TRUE(st) << st.message();
    if (!st)
      return {};
    const float *w = reinterpret_cast<const float *>(art->tensorData(0));
    return std::vector<float>(w, w + 12);
  }
};

TEST_F(ExternalWeightsTest, EachPartKindMakesItsValues) {
  const std::vector<float> a = iota(18, 1), b = iota(20, -3);
  // Rows 2..5 of a.
  EXPECT_EQ(loadW(externalManifest({"a#rows=2:6"})),
            std::vector<float>(a.begin() + 6, a.end()));
  // Rows 0..1 of a, then rows 4..5: two parts along dim 0.
  std::vector<float> want(a.begin(), a.begin() + 6);
  want.insert(want.end(), a.begin() + 12, a.end());
  EXPECT_EQ(loadW(externalManifest({"a#rows=0:2", "a#rows=4:6"})), want);
  // Columns 1..3 of b: each of its 4 rows' middle values.
  want.clear();
  for (int r = 0; r < 4; ++r)
    for (int c = 1; c < 4; ++c)
      want.push_back(b[5 * r + c]);
  EXPECT_EQ(loadW(externalManifest({"b#cols=1:4"})), want);
  // Columns 0..1 of b beside column 4: concatenated along dim 1.
  want.clear();
  for (int r = 0; r < 4; ++r)
    for (int c : {0, 1, 4})
      want.push_back(b[5 * r + c]);
  EXPECT_EQ(loadW(externalManifest({"b#cols=0:2", "b#cols=4:5"}, 1)), want);
}

TEST_F(ExternalWeightsTest, PlusOneAndWholeTensors) {
  Manifest m = externalManifest({"c#plus1"});
  m.externalWeights.tensors.push_back({"c", 0, "F32", {4, 3}});
  ASSERT_TRUE(sampleWriter(m).write(path("p.ingot")));
  const std::vector<float> c = iota(12, -1.5f);
  writeSafetensors(path("model.safetensors"), {{"a", {{6, 3}, iota(18, 1)}},
                                               {"b", {{4, 5}, iota(20, -3)}},
                                               {"c", {{4, 3}, c}}});
  std::unique_ptr<Artifact> art;
  ASSERT_TRUE(Artifact::open(path("p.ingot"), &art, {dir_}));
  const float *w = reinterpret_cast<const float *>(art->tensorData(0));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(w[i], 1.0f + c[i]) << i;
  // The other tensors still come from the file's weight section.
  EXPECT_NE(art->tensorData(1), nullptr);
}

TEST_F(ExternalWeightsTest, ArtifactHoldsNoBytesOfExternalTensors) {
  Manifest m = sampleManifest();
  ASSERT_TRUE(sampleWriter(m).write(path("embedded.ingot")));
  ASSERT_TRUE(
      sampleWriter(externalManifest({"a#rows=0:4"})).write(path("x.ingot")));
  std::unique_ptr<Artifact> e, x;
  ASSERT_TRUE(Artifact::open(path("embedded.ingot"), &e));
  ASSERT_TRUE(
      Artifact::open(path("x.ingot"), &x, {.skipExternalWeights = true}));
  auto weightsSection = [](const Artifact &a) {
    for (const Artifact::SectionInfo &s : a.sections())
      if (s.name == "weights")
        return s.size;
    return uint64_t(0);
  };
  // "w" (48 bytes, first in the table) moved out of the section.
  EXPECT_LT(weightsSection(*x), weightsSection(*e));
  EXPECT_EQ(x->tensorData(0), nullptr);
  EXPECT_GE(x->manifest().tensors[0].offset, weightsSection(*x));
  EXPECT_EQ(x->manifest().memory.weightsBytes,
            x->manifest().externalWeights.spaceBytes);
}

TEST_F(ExternalWeightsTest, LoaderRefusesTheWrongWeightsOption) {
  ASSERT_TRUE(sampleWriter(externalManifest({"a"})).write(path("x.ingot")));
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path("x.ingot"), &art);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("pass --weights DIR"), std::string::npos)
      << st.message();
  ASSERT_TRUE(sampleWriter(sampleManifest()).write(path("e.ingot")));
  st = Artifact::open(path("e.ingot"), &art, {dir_});
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("holds its own weights"), std::string::npos);
}

TEST_F(ExternalWeightsTest, WriterRefusesUnsafeSources) {
  struct Case {
    const char *what, *needle;
    void (*mutate)(Manifest &);
  };
  const Case cases[] = {
      {"file outside the directory", "plain file name",
       [](Manifest &m) {
         m.externalWeights.files[0] = "../model.safetensors";
       }},
      {"part naming no listed tensor", "do not list",
       [](Manifest &m) { m.tensors[0].transform.parts = {"z#rows=0:4"}; }},
      {"bad slice suffix", "bad slice suffix",
       [](Manifest &m) { m.tensors[0].transform.parts = {"a#rows=4:2"}; }},
      {"unsorted sources", "out of order",
       [](Manifest &m) {
         std::swap(m.externalWeights.tensors[0], m.externalWeights.tensors[1]);
       }},
      {"source in a missing file", "in file 3",
       [](Manifest &m) { m.externalWeights.tensors[0].file = 3; }},
      {"unknown source dtype", "unknown dtype",
       [](Manifest &m) { m.externalWeights.tensors[0].dtype = "F12"; }},
      {"external tensors without sources", "names no external weight files",
       [](Manifest &m) { m.externalWeights = {}; }},
      {"concat axis past the rank", "axis 2",
       [](Manifest &m) { m.tensors[0].transform.concatAxis = 2; }},
  };
  for (const Case &c : cases) {
    Manifest m = externalManifest({"a#rows=0:4"});
    c.mutate(m);
    Status st = sampleWriter(m).write(path("bad.ingot"));
    ASSERT_FALSE(st) << c.what << " was written";
    EXPECT_NE(st.message().find(c.needle), std::string::npos)
        << c.what << ": " << st.message();
  }
}

} // namespace
