//===- fuzz_onnx.cpp - ONNX model bytes -> import, compile, run -----------===//
#include "CompileSupport.h"
#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ingot::fuzz::compileAndRun(
      ingot::fuzz::writeScratch("model.onnx", data, size));
  return 0;
}
