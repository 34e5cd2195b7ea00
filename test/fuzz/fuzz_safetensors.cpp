//===- fuzz_safetensors.cpp - safetensors bytes -> reader, compile, run ---===//
//
// The fuzzed bytes are model.safetensors of the micro HF model in
// test/fuzz/data/hf_micro; its config and tokenizer stay fixed, so inputs
// that keep the tensor table valid go on through the whole compile.
//
//===----------------------------------------------------------------------===//
#include "CompileSupport.h"
#include "FuzzSupport.h"
#include "compiler/hf/Safetensors.h"

using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (const char *f : {"config.json", "tokenizer.json",
                        "tokenizer_config.json", "generation_config.json"})
    fuzz::stageDataFile(std::string("hf_micro/") + f, std::string("hf/") + f);
  const std::string path =
      fuzz::writeScratch("hf/model.safetensors", data, size);
  std::unique_ptr<compiler::hf::SafetensorsFile> file;
  if (!fuzz::report("safetensors",
                    compiler::hf::SafetensorsFile::open(path, file)))
    return 0;
  for (const auto &[name, t] : file->tensors())
    (void)file->read(t.begin, t.end - t.begin, [](const void *, size_t) {});
  fuzz::compileAndRun(fuzz::scratchDir() + "/hf");
  return 0;
}
