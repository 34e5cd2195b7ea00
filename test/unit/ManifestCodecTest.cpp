//===- ManifestCodecTest.cpp - Manifest wire format round trip and fuzz ---===//
#include "SampleArtifact.h"

#include <gtest/gtest.h>
#include <random>

using namespace ingot;
using namespace ingot::testing;

namespace {

TEST(ManifestCodecTest, RoundTripsEveryField) {
  Manifest m = sampleManifest();
  m.tensors[0].offset = 4096, m.tensors[0].bytes = 48;
  m.formatVersion = 3;
  m.memory.weightsBytes = 123456789012345;
  m.steps[0].attrs[1].f = -0.0; // a default value, but not the same bits
  m.buffers[2].tensorIndex = 0;
  std::vector<uint8_t> bytes = encodeManifest(m);
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  expectSameManifest(m, got);
  EXPECT_EQ(encodeManifest(got), bytes);
}

TEST(ManifestCodecTest, DefaultsEncodeToNothing) {
  EXPECT_TRUE(encodeManifest(Manifest()).empty());
  Manifest got;
  got.modelName = "stale";
  ASSERT_TRUE(decodeManifest(nullptr, 0, &got));
  expectSameManifest(Manifest(), got);
}

TEST(ManifestCodecTest, SkipsUnknownFieldsAndAcceptsUnpacked) {
  // field 99 varint, field 98 fixed32, field 97 bytes; then field 5 tensor
  // with shape as unpacked varints (field 3, wire type 0).
  std::vector<uint8_t> bytes = {0x98, 0x06, 0x05, 0x95, 0x06, 1,   2,
                                3,    4,    0x8a, 0x06, 0x02, 'h', 'i',
                                0x2a, 0x04, 0x18, 0x02, 0x18, 0x03};
  Manifest got;
  Status st = decodeManifest(bytes.data(), bytes.size(), &got);
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(got.tensors.size(), 1u);
  EXPECT_EQ(got.tensors[0].shape, (std::vector<int64_t>{2, 3}));
}

TEST(ManifestCodecTest, NamesWhatIsWrong) {
  auto decodeError = [](std::vector<uint8_t> bytes) {
    Manifest got;
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    EXPECT_FALSE(st);
    return st.message();
  };
  // tensors[0] with dtype 77
  EXPECT_EQ(decodeError({0x2a, 0x02, 0x10, 77}),
            "malformed manifest at tensors[0]: invalid dtype");
  // steps[0] holding an attr whose length runs past the step
  EXPECT_EQ(decodeError({0x3a, 0x02, 0x22, 0x05}),
            "malformed manifest at steps[0]: length-delimited field runs past "
            "the end of its message");
  // steps[0].attrs[0] with kind 9
  EXPECT_EQ(decodeError({0x3a, 0x04, 0x22, 0x02, 0x10, 0x09}),
            "malformed manifest at steps[0].attrs[0]: invalid attribute kind");
  // a huge length must not allocate
  EXPECT_NE(decodeError({0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                         0xff, 0x01})
                .find("runs past the end"),
            std::string::npos);
  EXPECT_NE(decodeError({0x08}).find("truncated varint"), std::string::npos);
  EXPECT_NE(decodeError({0x0b}).find("wire type"), std::string::npos);
  EXPECT_NE(decodeError({0x00}).find("invalid field number"),
            std::string::npos);
  // buffers[0].kind = 4
  EXPECT_NE(decodeError({0x32, 0x02, 0x10, 0x04}).find("buffer kind"),
            std::string::npos);
  // inputs[0].dims[0] with a string where an int belongs
  EXPECT_EQ(decodeError({0x42, 0x04, 0x1a, 0x02, 0x0a, 0x00}),
            "malformed manifest at inputs[0].dims[0]: field has the wrong "
            "wire type");
}

TEST(ManifestCodecTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(42);
  Manifest got;
  int ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes(rng() % 300);
    for (uint8_t &b : bytes)
      b = uint8_t(rng());
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    ok += bool(st);
    if (!st) {
      EXPECT_FALSE(st.message().empty());
    }
  }
  EXPECT_LT(ok, 20000);
}

TEST(ManifestCodecTest, MutatedManifestsNeverCrash) {
  std::vector<uint8_t> good = encodeManifest(sampleManifest());
  std::mt19937_64 rng(7);
  Manifest got;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes = good;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      size_t pos = rng() % bytes.size();
      switch (rng() % 4) {
      case 0:
        bytes[pos] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1:
        bytes[pos] = uint8_t(rng());
        break;
      case 2:
        bytes.resize(pos);
        break;
      case 3:
        bytes.insert(bytes.begin() + pos, uint8_t(rng()));
        break;
      }
    }
    Status st = decodeManifest(bytes.data(), bytes.size(), &got);
    if (!st) {
      EXPECT_EQ(st.message().rfind("malformed manifest", 0), 0u);
    }
  }
}

} // namespace
