//===- GgufImporter.h - GGUF files into ingot -------------------*- C++ -*-===//
#pragma once

#include "compiler/hf/HfImporter.h"

namespace ingot::compiler {

/// Whether `path` is a regular file that starts with the GGUF magic.
bool isGgufFile(const std::string &path);

/// Reads a GGUF file (llama.cpp's format, versions 2 and 3) and fills
/// `module` with the same `@main` engine step importHf builds from a Hugging
/// Face directory: the architecture and hyper-parameters come from the
/// metadata, the tokenizer and chat template too, and the weights are the
/// file's tensors under their Hugging Face names (llama.cpp's Q/K row order
/// undone). `@main` carries `ingot.stored_formats`, the block format each
/// quantised tensor keeps (Q8_0, Q4_0 and Q4_1 bit for bit; other types
/// converted, with a note on stderr), for `ingot-quantize-weights
/// mode=stored`. Errors name the file and the key or tensor.
Status importGguf(const std::string &path, const HfImportOptions &options,
                  mlir::ModuleOp module, std::unique_ptr<WeightSource> *weights,
                  HfModelInfo *info);

/// GGUF architectures the importer knows, for messages and docs.
std::vector<std::string> supportedGgufArchitectures();

} // namespace ingot::compiler
