//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace ingot;

namespace {

/// Builds a .npy image by hand (independently of encodeNpy).
std::vector<uint8_t> npyBytes(const std::string &dict, int major,
                              const std::vector<uint8_t> &data) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(uint8_t(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::vector<uint8_t> floatBytes(std::vector<float> v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Status parse(const std::vector<uint8_t> &bytes, HostTensor *t) {
  return parseNpy(bytes.data(), bytes.size(), "x.npy", t);
}

TEST(Npy, ReadsWhatNumpyWrites) {
  HostTensor t;
  auto bytes =
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 1,
               floatBytes({1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(parse(bytes, &t).isOk());
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reinterpret_cast<float *>(t.data.data())[5], 6.0f);

  // Scalar, 1-tuple, version 2.0, reordered keys, double quotes.
  ASSERT_TRUE(
      parse(npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                     1, std::vector<uint8_t>(8, 0)),
            &t)
          .isOk());
  EXPECT_TRUE(t.shape.empty());
  ASSERT_TRUE(
      parse(
          npyBytes(
              "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"|b1\"}",
              2, {1, 0, 1}),
          &t)
          .isOk());
  EXPECT_EQ(t.dtype, DType::Bool);
  EXPECT_EQ(t.shape, std::vector<int64_t>{3});
  // Fortran order is harmless for rank <= 1.
  ASSERT_TRUE(
      parse(npyBytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }",
                     3, std::vector<uint8_t>(8, 0)),
            &t)
          .isOk());
  EXPECT_EQ(t.dtype, DType::I32);
  // Zero-size arrays.
  ASSERT_TRUE(
      parse(npyBytes(
                "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }",
                1, {}),
            &t)
          .isOk());
  EXPECT_EQ(t.shape, (std::vector<int64_t>{0, 5}));
}

TEST(Npy, EveryDTypeRoundTrips) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ingot-npy-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32,
                   DType::I8, DType::U8, DType::Bool}) {
    HostTensor t;
    t.dtype = dt;
    t.shape = {3, 1, 4};
    t.data.resize(12 * dtypeSize(dt));
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = dt == DType::Bool ? uint8_t(i & 1) : uint8_t(i * 37 + 1);
    std::string path = (dir / (std::string(dtypeName(dt)) + ".npy")).string();
    ASSERT_TRUE(writeNpy(path, t).isOk());
    // numpy requires the data to start on a 64-byte boundary.
    std::vector<uint8_t> raw;
    ASSERT_TRUE(encodeNpy(t, path, &raw).isOk());
    EXPECT_EQ((raw.size() - t.data.size()) % 64, 0u);
    HostTensor back;
    ASSERT_TRUE(readNpy(path, &back).isOk()) << dtypeName(dt);
    EXPECT_EQ(back.dtype, dt);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.data, t.data);
  }
  // A 1-D tensor is written as the 1-tuple "(5,)" and a scalar as "()".
  HostTensor v;
  v.dtype = DType::F32;
  v.shape = {5};
  v.data.resize(20);
  std::vector<uint8_t> raw;
  ASSERT_TRUE(encodeNpy(v, "v", &raw).isOk());
  EXPECT_NE(std::string(raw.begin(), raw.end()).find("'shape': (5,)"),
            std::string::npos);
  v.shape = {};
  v.data.resize(4);
  ASSERT_TRUE(encodeNpy(v, "v", &raw).isOk());
  EXPECT_NE(std::string(raw.begin(), raw.end()).find("'shape': ()"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

void expectError(const std::vector<uint8_t> &bytes, const std::string &part) {
  HostTensor t;
  Status s = parse(bytes, &t);
  ASSERT_FALSE(s.isOk()) << "expected an error mentioning " << part;
  EXPECT_NE(s.message().find("x.npy"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(Npy, ClearErrors) {
  expectError(
      npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 1,
               floatBytes({1, 2, 3, 4, 5, 6})),
      "Fortran");
  expectError(
      npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 1,
               floatBytes({1})),
      "big-endian");
  expectError(
      npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 1,
               std::vector<uint8_t>(8)),
      "unsupported .npy dtype '<c8'");
  expectError(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 1,
               floatBytes({1, 2, 3})),
      "truncated");
  expectError(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 1,
               floatBytes({1, 2})),
      "trailing");
  expectError(npyBytes("{'descr': '<f4', 'shape': (1,), }", 1, floatBytes({1})),
              "malformed");
  expectError(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", 1,
               floatBytes({1})),
      "malformed");
  expectError({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0}, "not a .npy file");
  auto good =
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 1,
               floatBytes({1}));
  expectError(std::vector<uint8_t>(good.begin(), good.begin() + 30),
              "truncated");
  auto v9 = good;
  v9[6] = 9;
  expectError(v9, "version 9.0");

  HostTensor t;
  Status s = readNpy("/nonexistent/dir/in.npy", &t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("/nonexistent/dir/in.npy"), std::string::npos);
}

// ml_dtypes' types have no numpy dtype: numpy saves them as raw values
// ('|V1', '<V2'), and so does ingot; reading one gives u8 / u16 bytes
// flagged raw, for the caller to type from the model, and is an error for
// a caller that cannot.
TEST(Npy, RawValuesOfTypesNumpyLacks) {
  for (DType dt : {DType::BF16, DType::F8E4M3FN, DType::F4E2M1, DType::I4}) {
    HostTensor t;
    t.dtype = dt;
    t.shape = {3};
    t.data.resize(3 * dtypeSize(dt));
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = uint8_t(0x31 + 7 * i);
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encodeNpy(t, "out.npy", &bytes).isOk()) << dtypeName(dt);
    const std::string header(bytes.begin(), bytes.begin() + 64);
    EXPECT_NE(header.find(dtypeSize(dt) == 2 ? "'<V2'" : "'|V1'"),
              std::string::npos)
        << header;
    HostTensor back;
    bool raw = false;
    ASSERT_TRUE(
        parseNpy(bytes.data(), bytes.size(), "out.npy", &back, &raw).isOk());
    EXPECT_TRUE(raw);
    EXPECT_EQ(back.dtype, dtypeSize(dt) == 2 ? DType::U16 : DType::U8);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.data, t.data);
    Status s = parseNpy(bytes.data(), bytes.size(), "in.npy", &back);
    EXPECT_NE(s.message().find("raw values"), std::string::npos) << s.message();
  }
}

TEST(Npy, RefusesFilesThatAreNotRegular) {
  // /dev/zero would be read forever, a directory fails mid-read.
  for (const char *path : {"/dev/zero", "/"}) {
    HostTensor t;
    Status s = readNpy(path, &t);
    ASSERT_FALSE(s.isOk()) << path;
    EXPECT_EQ(s.message(), std::string(path) + ": not a regular file");
  }
}

} // namespace
