//===- fuzz_batch_json.cpp - batch-file lines -> JSON, request fields -----===//
//
// One line of `ingot generate --batch-file`: the CLI's strict JSON parse
// (nlohmann-json, no exception may escape it, JsonText.h), then
// the line's keys read into an engine request against the micro model's
// tokenizer (prompts encoded, chat messages templated, ranges checked).
//
//===----------------------------------------------------------------------===//
#include "BatchLineParser.h"
#include "FuzzSupport.h"
#include "JsonText.h"
#include "ingot/Artifact.h"
#include "ingot/Tokenizer.h"

#include <string>

using namespace ingot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Tokenizer &tokenizer = fuzz::microTokenizer();
  const std::string line(reinterpret_cast<const char *>(data), size);
  cli::OrderedJson value;
  std::string error = cli::parseJsonLine(line, &value);
  if (!fuzz::report("json", error.empty() ? Status::ok() : Status::error(error)))
    return 0;
  const Manifest &m = fuzz::microArtifact().manifest();
  RequestParams request;
  cli::GenerateArgs args;
  error = cli::parseBatchLine(value, args, m.generation, tokenizer,
                              tokenizer.vocabSize(), &request);
  fuzz::report("batch line", error.empty() ? Status::ok() : Status::error(error));
  return 0;
}
