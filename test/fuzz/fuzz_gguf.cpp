//===- fuzz_gguf.cpp - GGUF bytes -> reader, import, compile, run ---------===//
#include "CompileSupport.h"
#include "FuzzSupport.h"
#include "compiler/gguf/GgufFile.h"

using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string path = fuzz::writeScratch("model.gguf", data, size);
  std::unique_ptr<compiler::gguf::GgufFile> file;
  if (!fuzz::report("gguf", compiler::gguf::GgufFile::open(path, file)))
    return 0;
  for (const auto &t : file->tensors())
    (void)file->read(t.offset, t.bytes, [](const void *, size_t) {});
  fuzz::compileAndRun(path);
  return 0;
}
