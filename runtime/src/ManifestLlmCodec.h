//===- ManifestLlmCodec.h - Wire format of the LLM manifest parts -*- C++ -*-=//
//
// LlmConfig, TokenizerData and GenerationDefaults (docs/manifest.proto
// fields 13-15 of Manifest), split out of ManifestCodec.cpp. Same rules: a
// field equal to its default is not written; the decoder checks wire types
// and ranges and skips unknown fields.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ProtoWire.h"

#include "ingot/Manifest.h"

#include <string>

namespace ingot::llmcodec {

/// A proto2 bool: varint 0 or 1.
bool readBool(proto::Reader &r, uint32_t type, bool *b);

proto::Writer encodeLlm(const LlmConfig &l);
proto::Writer encodeTokenizer(const TokenizerData &t);
proto::Writer encodeGeneration(const GenerationDefaults &g);

/// On failure the reader holds the reason and *where the path inside the
/// message (e.g. ".added_tokens[2]"), if any.
bool decodeLlm(proto::Reader &r, LlmConfig *l, std::string *where);
bool decodeTokenizer(proto::Reader &r, TokenizerData *t, std::string *where);
bool decodeGeneration(proto::Reader &r, GenerationDefaults *g,
                      std::string *where);

} // namespace ingot::llmcodec
