//===- TokenizerConfigImport.h - BOS/EOS and chat template ------*- C++ -*-===//
//
// The part of importTokenizer that reads tokenizer_config.json (and, for
// what it lacks, chat_template.jinja and config.json). Also used by it:
// readJson.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include "llvm/Support/JSON.h"

#include <string>

namespace ingot::compiler {

/// Reads and parses the file `path` (through parseJson, compiler/
/// JsonLimits.h); *found = false (and ok) if it does not exist. Errors name
/// the path.
Status readJson(const std::string &path, llvm::json::Value *out, bool *found);

/// Fills bosId, eosId, addBos and chatTemplate of `t`, whose vocab and added
/// tokens are already read. `leadingId` is the token tokenizer.json's
/// post-processor puts first (-1 if none): the BOS when nothing else says.
Status importTokenizerConfig(const std::string &dir, int32_t leadingId,
                             TokenizerData *t);

/// "chatml", "chatml:" + default system message, "llama3" or "" for the
/// text of a Jinja chat template.
std::string detectChatTemplate(const std::string &jinja);

} // namespace ingot::compiler
