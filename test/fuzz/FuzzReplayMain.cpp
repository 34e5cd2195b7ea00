//===- FuzzReplayMain.cpp - Runs corpus files through a fuzz target -------===//
//
// The normal build links each fuzz target with this main instead of
// libFuzzer, so `make test` replays every checked-in corpus file (seeds and
// the inputs of bugs already fixed) on every change, in seconds.
//
//   fuzz-replay-onnx test/fuzz/corpus/onnx [more files or dirs]
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> corpusFiles(int argc, char **argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      for (const auto &e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else {
      files.push_back(arg);
    }
  }
  std::sort(files.begin(), files.end()); // a stable order to report
  return files;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  const std::vector<fs::path> files = corpusFiles(argc, argv);
  if (files.empty()) {
    std::fprintf(stderr, "error: no corpus files in the given paths\n");
    return 1;
  }
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "error: cannot read %s\n", f.c_str());
      return 1;
    }
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
