//===- CompileSupport.h - Compiling fuzzed models ---------------*- C++ -*-===//
#pragma once

#include <string>

namespace ingot::fuzz {

/// Runs the whole `ingot compile` pipeline on `modelPath` (an ONNX file, a
/// GGUF file or an HF directory) into a scratch artifact; if it compiles,
/// exercises the artifact. Refusals are the expected outcome for most
/// fuzzed inputs.
void compileAndRun(const std::string &modelPath);

} // namespace ingot::fuzz
