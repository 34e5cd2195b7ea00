//===- FuzzSupport.cpp - Shared helpers of the fuzz targets ---------------===//
#include "FuzzSupport.h"

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/Generator.h"
#include "ingot/ThreadPool.h"
#include "ingot/Tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ingot::fuzz {
namespace {

/// Removes the scratch directory when the process exits normally.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    const char *env = std::getenv("TMPDIR");
    fs::path root = env && *env ? fs::path(env)
                    : fs::is_directory("/dev/shm") ? fs::path("/dev/shm")
                                                   : fs::path("/tmp");
    path = (root / ("ingot-fuzz-" + std::to_string(::getpid()))).string();
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Larger inputs than this are not run through a plan: a fuzzed manifest may
// declare any shape, and a finding must be a bug, not a big allocation.
constexpr int64_t kMaxInputElements = 1 << 16;

int64_t elementCount(const IoSpec &io, std::vector<int64_t> *shape) {
  int64_t n = 1;
  for (const Dim &d : io.dims) {
    const int64_t size = d.symbol.empty() ? d.size : 1;
    if (size < 0 || size > kMaxInputElements)
      return -1;
    shape->push_back(size);
    n *= size;
    if (n > kMaxInputElements)
      return -1;
  }
  return n;
}

/// Small values from the seed: integer inputs are ids and positions, and
/// values 0..3 are in range for any model the corpus holds.
HostTensor makeInput(const IoSpec &io, const std::vector<int64_t> &shape,
                     int64_t n, const uint8_t *seed, size_t seedSize) {
  HostTensor t;
  t.dtype = io.dtype;
  t.shape = shape;
  t.data.resize(static_cast<size_t>(n) * dtypeSize(io.dtype));
  for (size_t i = 0; i < t.data.size(); ++i) {
    const uint8_t b = seedSize ? seed[i % seedSize] : uint8_t(i);
    t.data[i] = (io.dtype == DType::F32 || io.dtype == DType::F16 ||
                 io.dtype == DType::BF16)
                    ? uint8_t(b & 0x3f) // a finite value of modest size
                    : (i % dtypeSize(io.dtype) == 0 ? uint8_t(b & 3) : 0);
  }
  return t;
}

void runPlanOnce(const Artifact &artifact, const uint8_t *seed,
                 size_t seedSize) {
  std::vector<NamedTensor> inputs;
  for (const IoSpec &io : artifact.manifest().inputs) {
    std::vector<int64_t> shape;
    const int64_t n = elementCount(io, &shape);
    if (n < 0)
      return;
    inputs.push_back({io.name, makeInput(io, shape, n, seed, seedSize)});
  }
  ThreadPool pool(1);
  Executor executor(artifact, pool);
  std::vector<NamedTensor> outputs;
  report("run", executor.run(inputs, &outputs));
}

void generateOnce(const Artifact &artifact) {
  std::unique_ptr<Generator> generator;
  if (!report("generator", Generator::create(artifact, 1, /*kvBlocks=*/4,
                                             &generator)))
    return;
  GenerateOptions options;
  options.maxNewTokens = 2;
  GenerateResult result;
  report("generate", generator->generate({1, 2, 3}, options, &result));
}

} // namespace

bool report(const char *stage, const Status &st) {
  static const bool verbose = [] {
    const char *env = std::getenv("INGOT_FUZZ_VERBOSE");
    return env && *env && *env != '0';
  }();
  if (verbose)
    std::fprintf(stderr, "fuzz: %s: %s\n", stage,
                 st ? "ok" : st.message().substr(0, 300).c_str());
  return static_cast<bool>(st);
}

const std::string &scratchDir() {
  static ScratchDir dir;
  return dir.path;
}

std::string writeScratch(const std::string &name, const uint8_t *data,
                         size_t size) {
  const std::string path = scratchDir() + "/" + name;
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(data), std::streamsize(size));
  return path;
}

std::string dataDir() {
  const char *env = std::getenv("INGOT_FUZZ_DATA");
  return env && *env ? std::string(env) : std::string(INGOT_FUZZ_DATA_DIR);
}

std::string artifactDir() {
  const char *env = std::getenv("INGOT_FUZZ_ARTIFACTS");
  return env && *env ? std::string(env) : std::string(INGOT_FUZZ_ARTIFACT_DIR);
}

const Artifact &microArtifact() {
  static std::unique_ptr<Artifact> artifact = [] {
    std::unique_ptr<Artifact> a;
    if (Status st = Artifact::open(artifactDir() + "/micro.ingot", &a); !st) {
      std::fprintf(stderr, "fuzz: %s\n", st.message().c_str());
      std::abort();
    }
    return a;
  }();
  return *artifact;
}

const Tokenizer &microTokenizer() {
  static std::unique_ptr<Tokenizer> tokenizer = [] {
    std::unique_ptr<Tokenizer> t;
    if (Status st = Tokenizer::create(microArtifact().manifest().tokenizer, &t);
        !st) {
      std::fprintf(stderr, "fuzz: micro.ingot's tokenizer: %s\n",
                   st.message().c_str());
      std::abort();
    }
    return t;
  }();
  return *tokenizer;
}

void stageDataFile(const std::string &from, const std::string &to) {
  const fs::path dest = fs::path(scratchDir()) / to;
  fs::create_directories(dest.parent_path());
  if (!fs::exists(dest))
    fs::copy_file(fs::path(dataDir()) / from, dest);
}

void exerciseArtifact(const std::string &path, const uint8_t *seed,
                      size_t seedSize) {
  std::unique_ptr<Artifact> artifact;
  if (!report("load", Artifact::open(path, &artifact)))
    return;
  if (artifact->manifest().hasLlm)
    generateOnce(*artifact);
  else
    runPlanOnce(*artifact, seed, seedSize);
}

} // namespace ingot::fuzz
