//===- ArtifactTestFixture.h - A scratch directory per test -----*- C++ -*-===//
//
// The fixture of ArtifactTest.cpp and ArtifactCorruptionTest.cpp: a fresh
// directory per test, the sample artifact written into it, and a check that
// open() refuses given bytes with a message that names the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "SampleArtifact.h"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

namespace ingot::testing {

inline std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

inline void writeFile(const std::string &path,
                      const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

inline std::vector<std::string> listDir(const std::string &dir) {
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

} // namespace ingot::testing
