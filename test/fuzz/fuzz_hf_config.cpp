//===- fuzz_hf_config.cpp - config.json -> HF import, compile, run --------===//
//
// The fuzzed bytes are config.json of the micro HF model in
// test/fuzz/data/hf_micro; its weights and tokenizer stay fixed.
//
//===----------------------------------------------------------------------===//
#include "CompileSupport.h"
#include "FuzzSupport.h"

using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (const char *f : {"model.safetensors", "tokenizer.json",
                        "tokenizer_config.json", "generation_config.json"})
    fuzz::stageDataFile(std::string("hf_micro/") + f, std::string("hf/") + f);
  fuzz::writeScratch("hf/config.json", data, size);
  fuzz::compileAndRun(fuzz::scratchDir() + "/hf");
  return 0;
}
