//===- ManifestMutation.h - Hostile edits of a valid artifact ---*- C++ -*-===//
//
// What a hostile user can do to an artifact: decode its manifest, change
// it consistently, encode it again and recompute every checksum. The
// structure tests build a valid artifact, apply one such edit and check
// that Artifact::open refuses the result with a message naming the part.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/ArtifactFormat.h"
#include "ingot/Checksum.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace ingot::testing {

inline Attr makeAttr(const std::string &name, int64_t v) {
  Attr a;
  a.name = name, a.kind = Attr::Kind::Int, a.i = v;
  return a;
}
inline Attr makeAttr(const std::string &name, double v) {
  Attr a;
  a.name = name, a.kind = Attr::Kind::Float, a.f = v;
  return a;
}
inline Attr makeAttr(const std::string &name, const char *v) {
  Attr a;
  a.name = name, a.kind = Attr::Kind::Str, a.s = v;
  return a;
}

/// Builds a plan buffer by buffer, as the compiler's PlanToManifest does;
/// write() produces a valid artifact (the writer validates it).
struct PlanBuilder {
  Manifest m;
  std::vector<std::vector<uint8_t>> weights; // per tensor

  PlanBuilder() {
    m.compilerVersion = "test";
    m.targets = {"cpu"};
  }
  uint32_t buffer(BufferKind kind, const std::string &name, DType dtype,
                  std::vector<int64_t> maxShape) {
    Buffer b;
    b.id = uint32_t(m.buffers.size()), b.kind = kind, b.dtype = dtype;
    b.rank = uint32_t(maxShape.size()), b.maxShape = std::move(maxShape);
    b.name = name;
    m.buffers.push_back(b);
    return b.id;
  }
  uint32_t input(const std::string &name, DType dtype,
                 std::vector<int64_t> maxShape, std::vector<Dim> dims) {
    const uint32_t id = buffer(BufferKind::Input, name, dtype, maxShape);
    m.buffers[id].ioIndex = int32_t(m.inputs.size());
    m.inputs.push_back({name, dtype, std::move(dims), id});
    return id;
  }
  /// A float32 weight holding 0.01 * (i % 7 - 3) at element i.
  uint32_t param(const std::string &name, std::vector<int64_t> shape) {
    TensorEntry t;
    t.name = name, t.dtype = DType::F32, t.shape = shape;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<uint8_t> bytes(size_t(n) * 4);
    for (int64_t i = 0; i < n; ++i) {
      const float v = 0.01f * float(i % 7 - 3);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
    weights.push_back(std::move(bytes));
    const uint32_t id = buffer(BufferKind::Param, name, DType::F32, shape);
    m.buffers[id].tensorIndex = int32_t(m.tensors.size());
    m.tensors.push_back(t);
    return id;
  }
  uint32_t arena(const std::string &name, DType dtype,
                 std::vector<int64_t> maxShape, uint64_t offset) {
    const uint32_t id = buffer(BufferKind::Arena, name, dtype, maxShape);
    Buffer &b = m.buffers[id];
    b.maxBytes = dtypeSize(dtype);
    for (int64_t d : b.maxShape)
      b.maxBytes *= uint64_t(d);
    b.arenaOffset = offset;
    m.memory.arenaBytes =
        std::max(m.memory.arenaBytes, format::alignUp(offset + b.maxBytes, 64));
    return id;
  }
  void step(const std::string &kernel, std::vector<uint32_t> ins,
            std::vector<uint32_t> outs, std::vector<Attr> attrs = {}) {
    Step s;
    s.kernel = kernel;
    s.origin = "n" + std::to_string(m.steps.size()) + "/" + kernel;
    s.inputs = std::move(ins), s.outputs = std::move(outs);
    s.attrs = std::move(attrs);
    m.steps.push_back(std::move(s));
  }
  void output(const std::string &name, uint32_t id, std::vector<Dim> dims) {
    m.outputs.push_back({name, m.buffers[id].dtype, std::move(dims), id});
  }
  Status write(const std::string &path) const {
    ArtifactWriter w(m);
    for (size_t i = 0; i < weights.size(); ++i) {
      const std::vector<uint8_t> &bytes = weights[i];
      w.setTensorProducer(i, [&bytes](const ByteSink &sink) {
        sink(bytes.data(), bytes.size());
        return Status::ok();
      });
    }
    w.addCodeSection("cpu", {});
    return w.write(path);
  }
};

inline std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

/// Rewrites the artifact at `in` into `out` with its manifest changed by
/// `edit`: sections laid out again, checksums recomputed, so that only the
/// loader's structural checks stand between the edit and the runtime.
inline void writeMutated(const std::string &in, const std::string &out,
                         const std::function<void(Manifest &)> &edit) {
  std::vector<uint8_t> v = fileBytes(in);
  std::string compiler;
  std::vector<format::SectionRecord> secs;
  ASSERT_TRUE(format::parseHeader(v.data(), v.size(), &compiler, &secs));
  Manifest m;
  ASSERT_EQ(secs[0].name, format::kManifestSection);
  ASSERT_TRUE(decodeManifest(v.data() + secs[0].offset, secs[0].size, &m));
  edit(m);
  std::vector<std::vector<uint8_t>> bodies;
  for (size_t i = 0; i < secs.size(); ++i)
    bodies.push_back(i == 0 ? encodeManifest(m)
                            : std::vector<uint8_t>(v.begin() + secs[i].offset,
                                                   v.begin() + secs[i].offset +
                                                       secs[i].size));
  uint64_t end = format::headerSize(compiler.size(), secs.size());
  for (size_t i = 0; i < secs.size(); ++i) {
    const bool weights = secs[i].name == format::kWeightsSection;
    secs[i].offset = format::alignUp(end, weights ? format::kWeightsAlign
                                                  : format::kSectionAlign);
    secs[i].size = bodies[i].size();
    secs[i].checksum = checksum64(bodies[i].data(), bodies[i].size());
    end = secs[i].offset + secs[i].size;
  }
  std::vector<uint8_t> file(end, 0);
  const std::vector<uint8_t> header = format::encodeHeader(compiler, secs);
  std::copy(header.begin(), header.end(), file.begin());
  for (size_t i = 0; i < secs.size(); ++i)
    std::copy(bodies[i].begin(), bodies[i].end(),
              file.begin() + secs[i].offset);
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(file.data()), file.size());
}

/// Artifact::open must refuse the artifact at `path` with an "invalid
/// manifest" message naming the file and containing every one of `parts`.
inline void expectLoadRefused(const std::string &path,
                              const std::vector<std::string> &parts) {
  std::unique_ptr<Artifact> art;
  Status st = Artifact::open(path, &art);
  ASSERT_FALSE(st) << "accepted; expected: " << parts.front();
  EXPECT_EQ(art, nullptr);
  EXPECT_EQ(st.message().rfind(path + ": invalid manifest: ", 0), 0u)
      << st.message();
  for (const std::string &p : parts)
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "'" << p << "' not in: " << st.message();
}

/// A fixture around one valid plan (`plan()`), written to a temporary
/// artifact that each test edits into `mutant_`.
class MutatedPlanTest : public ::testing::Test {
protected:
  std::string base_ = tmp("base"), mutant_ = tmp("mutant");

  virtual PlanBuilder plan() const = 0;
  std::string tmp(const std::string &what) const {
    const ::testing::TestInfo *info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    return ::testing::TempDir() + info->test_suite_name() + "-" + what + "-" +
           std::to_string(::getpid()) + ".ingot";
  }
  void SetUp() override {
    Status st = plan().write(base_);
    ASSERT_TRUE(st) << st.message();
  }
  void TearDown() override {
    std::remove(base_.c_str());
    std::remove(mutant_.c_str());
  }
  /// The base artifact after `edit` must be refused with all of `parts`.
  void expectRefused(const std::function<void(Manifest &)> &edit,
                     const std::vector<std::string> &parts) {
    writeMutated(base_, mutant_, edit);
    expectLoadRefused(mutant_, parts);
  }
};

} // namespace ingot::testing
