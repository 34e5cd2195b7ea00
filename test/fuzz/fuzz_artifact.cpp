//===- fuzz_artifact.cpp - artifact bytes -> load, validate, one step -----===//
#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ingot::fuzz::exerciseArtifact(
      ingot::fuzz::writeScratch("input.ingot", data, size), data, size);
  return 0;
}
