//===- BatchLineParser.h - One line of `generate --batch-file` --*- C++ -*-===//
#pragma once

#include "BatchGenerate.h"
#include "JsonText.h"

#include "ingot/Engine.h"
#include "ingot/Manifest.h"
#include "ingot/Tokenizer.h"

#include <string>

namespace ingot::cli {

/// Reads the keys of one batch line (already parsed, by parseJsonLine) into
/// *r, with
/// the command line's sampling flags as the defaults of keys left out;
/// returns "" or the error, naming the key.
std::string parseBatchLine(const OrderedJson &line, const GenerateArgs &args,
                           const GenerationDefaults &defaults,
                           const Tokenizer &tokenizer, int64_t vocab,
                           RequestParams *r);

} // namespace ingot::cli
