//===- SentencePiece.h - Spaces, prefix and decoding of SPM BPE -*- C++ -*-===//
//
// SentencePiece-style BPE (Llama-2, Mistral, TinyLlama, Gemma) as Hugging
// Face `tokenizers` runs it from tokenizer.json, and as llama.cpp runs a
// GGUF "llama" vocabulary. Each stretch of text between added tokens is
// prepared for the model (SentencePieceBpe.h) like this:
//   1. every ' ' becomes "▁" (U+2581; only the space, not tabs or newlines)
//      and a "▁" goes in front according to the prefix scheme:
//        +prepend  every stretch (Llama-2's Prepend("▁") normalizer, and
//                  llama.cpp's add_space_prefix)
//        +first    the stretch at the start of the text, unless it starts
//                  with "▁" already (Metaspace prepend_scheme "first")
//        +always   every stretch unless it starts with "▁" (Metaspace
//                  prepend_scheme "always")
//        (none)    no prefix (Gemma, Metaspace prepend_scheme "never")
//   2. with +split the stretch is cut before every "▁" (Metaspace split).
// The pretokenizer string is "metaspace" followed by those flags (and
// "+ignore_merges"); the decoder string is "metaspace" followed by:
//   +byte_fallback      runs of <0xXX> tokens become their bytes, or one
//                       U+FFFD per byte when a run is not valid UTF-8 (the
//                       ByteFallback decoder)
//   +strip_space        one leading ' ' of the decoded text is removed
//                       (Strip(' ', 1, 0) after Fuse; llama.cpp)
//   +strip_first_token  every "▁" of the first token is dropped (the
//                       Metaspace decoder with a prefix scheme)
// Every other "▁" decodes to ' '.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/TokenizerFormat.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::tok {

/// Steps 1 and 2 for one non-empty stretch: *prepared holds the text with
/// "▁" for spaces and the prefix, *pieces views into it that concatenate to
/// it. `atTextStart`: the stretch starts the text being encoded.
void prepareStretch(std::string_view text, bool atTextStart,
                    const SentencePieceOptions &o, std::string *prepared,
                    std::vector<std::string_view> *pieces);

/// How ids turn into text: per id the token's raw string (vocab or added
/// token, "" for ids without one).
class SentencePieceDecoder {
public:
  void init(std::vector<std::string> raw, const SentencePieceOptions &o);
  /// The decoded text of the ids, as tokenizers' decoder chain gives it;
  /// ids outside the vocabulary or without a string are skipped.
  std::string decode(const std::vector<int32_t> &ids) const;
  /// One token on its own (for streaming): "▁" as ' ', a byte token as its
  /// raw byte when decoding bytes, no stripping.
  std::string tokenBytes(int32_t id) const;
  int32_t size() const { return int32_t(raw_.size()); }

private:
  std::vector<std::string> raw_, text_;
  std::vector<int16_t> byte_; // per id: byte value, or -1
  SentencePieceOptions options_;
};

} // namespace ingot::tok
