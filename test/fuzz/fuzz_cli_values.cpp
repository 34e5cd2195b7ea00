//===- fuzz_cli_values.cpp - flag value strings -> the CLI's parsers ------===//
//
// Every integer flag, --shape's "2x5x48" and --max-dim's "SYMBOL=N" go
// through these functions; text flags through the UTF-8 check.
//
//===----------------------------------------------------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"

#include <string>

using namespace ingot::cli;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  int64_t v = 0;
  std::string err;
  (void)parseFlagInt("--block-size", text, 1, kMaxBlockSize, &v, &err);
  (void)parseFlagInt("--seed", text.c_str(), 0, kInt64Max, &v, &err);
  std::vector<int64_t> dims;
  (void)parseDims(text, &dims);
  (void)validMaxDim(text);
  (void)invalidUtf8Error("--text", text);
  return 0;
}
