//===- ArtifactLoadBench.cpp - Where opening an artifact spends its time --===//
//
// A benchmark, not a test (ctest never runs it): for one artifact, the
// median over rounds of
//   - Artifact::open (map, checksum every section, verify, decode, validate),
//   - decodeManifest alone (FlatBuffers Verifier + conversion to Manifest),
//   - Tokenizer::create from the decoded data (the maps encode() uses).
// It is the figure behind reading the manifest by decoding it once rather
// than through the generated accessors (docs/artifact-format.md).
//   build/bin/bench-artifact-load model.ingot [rounds]
//
//===----------------------------------------------------------------------===//

#include "ingot/Artifact.h"
#include "ingot/ArtifactWriter.h"
#include "ingot/Tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <vector>

using namespace ingot;

namespace {

double medianMs(int rounds, const std::function<void()> &fn) {
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

[[noreturn]] void die(const Status &st) {
  std::fprintf(stderr, "bench-artifact-load: %s\n", st.message().c_str());
  std::exit(1);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench-artifact-load ARTIFACT [ROUNDS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  std::unique_ptr<Artifact> artifact;
  if (Status st = Artifact::open(path, &artifact); !st)
    die(st);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  const uint8_t *manifestBytes = nullptr;
  uint64_t manifestSize = 0;
  for (const Artifact::SectionInfo &s : artifact->sections())
    if (s.name == "manifest") {
      manifestBytes = file.data() + s.offset;
      manifestSize = s.size;
    }

  const double openMs = medianMs(rounds, [&] {
    std::unique_ptr<Artifact> a;
    if (Status st = Artifact::open(path, &a); !st)
      die(st);
  });
  const double decodeMs = medianMs(rounds, [&] {
    Manifest m;
    if (Status st = decodeManifest(manifestBytes, manifestSize, &m); !st)
      die(st);
  });
  const TokenizerData &tokens = artifact->manifest().tokenizer;
  const double tokenizerMs = tokens.vocab.empty() ? 0.0 : medianMs(rounds, [&] {
    std::unique_ptr<Tokenizer> t;
    if (Status st = Tokenizer::create(tokens, &t); !st)
      die(st);
  });
  std::printf("artifact        %s (%llu bytes, manifest %llu bytes, %zu "
              "tokens, %zu merges, %zu steps)\n",
              path.c_str(), static_cast<unsigned long long>(file.size()),
              static_cast<unsigned long long>(manifestSize),
              tokens.vocab.size(), tokens.merges.size(),
              artifact->manifest().steps.size());
  std::printf("open            %8.2f ms (median of %d)\n", openMs, rounds);
  std::printf("decodeManifest  %8.2f ms (%.0f%% of open)\n", decodeMs,
              100.0 * decodeMs / openMs);
  std::printf("Tokenizer       %8.2f ms\n", tokenizerMs);
  return 0;
}
