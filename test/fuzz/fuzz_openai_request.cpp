//===- fuzz_openai_request.cpp - HTTP request bodies -> request parsing ---===//
//
// The first byte picks /v1/chat/completions (odd) or /v1/completions; the
// rest is the body. The tokenizer is the micro model's, so prompts are
// encoded and checked against a real vocabulary and context.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "OpenAiRequest.h"
#include "ingot/Tokenizer.h"


using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  server::ModelInfo model;
  model.names = {"m"};
  model.tokenizer = &fuzz::microTokenizer();
  model.context = 32;
  model.vocab = model.tokenizer->vocabSize();
  const std::string body(reinterpret_cast<const char *>(data) + 1, size - 1);
  server::CompletionRequest request;
  server::ApiError error;
  (void)server::parseCompletionRequest(body, data[0] & 1, model, &request,
                                       &error);
  return 0;
}
