//===- fuzz_tokenizer_json.cpp - tokenizer.json -> import, encode, decode -===//
#include "FuzzSupport.h"
#include "compiler/hf/TokenizerImport.h"
#include "ingot/Tokenizer.h"

using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz::stageDataFile("hf_micro/tokenizer_config.json",
                      "tok/tokenizer_config.json");
  fuzz::writeScratch("tok/tokenizer.json", data, size);
  TokenizerData imported;
  if (!fuzz::report("import", compiler::importTokenizer(
                                   fuzz::scratchDir() + "/tok", &imported)))
    return 0;
  std::unique_ptr<Tokenizer> tokenizer;
  if (!fuzz::report("tokenizer", Tokenizer::create(imported, &tokenizer)))
    return 0;
  for (const char *text : {"Hello, world! 123", " ünï 日本 🙂\n\n  x",
                           "<|im_start|>user\nhi<|im_end|>"}) {
    const std::vector<int32_t> ids = tokenizer->encode(text, true);
    (void)tokenizer->decode(ids);
  }
  return 0;
}
