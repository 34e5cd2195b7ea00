//===- SentencePieceImport.h - SentencePiece-style tokenizer.json -*- C++ -*-=//
//
// The part of importTokenizer that reads how a SentencePiece-style BPE
// tokenizer.json (Llama-2, Mistral, TinyLlama, Gemma) handles spaces: its
// normalizer, pre_tokenizer and decoder, as the runtime's pretokenizer and
// decoder strings (runtime/src/tokenizer/SentencePiece.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <string>

namespace ingot::compiler {

/// Whether tokenizer.json is SentencePiece-style rather than byte-level:
/// byte fallback, a "▁" normalizer, a Metaspace pre-tokenizer or a decoder
/// made of Replace/ByteFallback/Fuse/Strip/Metaspace.
bool isSentencePieceStyle(const llvm::json::Object &root);

/// The pretokenizer and decoder strings for a SentencePiece-style
/// tokenizer.json, or an error naming the part ingot cannot reproduce.
Status readSentencePieceText(const llvm::json::Object &root,
                             std::string *pretokenizer, std::string *decoder);

/// model.byte_fallback, .unk_token (which must be in `ids`, the model
/// vocab) and .fuse_unk into `out`.
Status readSentencePieceModel(const llvm::json::Object &model,
                              const std::map<std::string, int32_t> &ids,
                              TokenizerData *out);

} // namespace ingot::compiler
