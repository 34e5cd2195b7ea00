//===- TokenizerFormat.h - The manifest's tokenizer strings -----*- C++ -*-===//
//
// TokenizerData (Manifest.h) stores the pre-tokenizer, the decoder and the
// chat template as short strings. The compiler writes them and the runtime's
// tokenizer reads them; both, and the artifact validator, parse them here so
// that the compiler can never write a string the runtime would refuse. What
// each option does to text: tokenizer/PreTokenizer.h, SentencePiece.h and
// ChatTemplate.h in the runtime.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot::tok {

// Byte-level BPE models ("gpt2", "llama3", ... pre-tokenizers).
enum class SplitPattern { Gpt2, Llama3, Qwen2, Gpt2Digits };

/// What TokenizerData::pretokenizer encodes: "<pattern>" optionally followed
/// by "+nfc" (NFC-normalise text between added tokens first) and
/// "+ignore_merges" (a word that is itself in the vocab is one token).
struct TokenizerOptions {
  SplitPattern pattern = SplitPattern::Gpt2;
  bool nfc = false;
  bool ignoreMerges = false;
};

/// Parses the pretokenizer string; false with *error saying why.
bool parseTokenizerOptions(std::string_view spec, TokenizerOptions *out,
                           std::string *error);
std::string formatTokenizerOptions(const TokenizerOptions &options);

// SentencePiece-style BPE models ("metaspace..." strings).
/// U+2581 LOWER ONE EIGHTH BLOCK in UTF-8: SentencePiece's space.
constexpr std::string_view kSpaceMark = "\xe2\x96\x81";

enum class SpacePrefix { None, Prepend, First, Always };
enum class LeadingStrip { None, Space, FirstToken };

struct SentencePieceOptions {
  SpacePrefix prefix = SpacePrefix::None;
  bool split = false;
  bool ignoreMerges = false;
  bool decodeBytes = false;
  LeadingStrip strip = LeadingStrip::None;
};

/// Parses TokenizerData::pretokenizer and ::decoder of a sentencepiece_bpe
/// model; false with *error saying why.
bool parseSentencePieceOptions(std::string_view pretokenizer,
                               std::string_view decoder,
                               SentencePieceOptions *out, std::string *error);
std::string formatSentencePiecePretokenizer(const SentencePieceOptions &o);
std::string formatSentencePieceDecoder(const SentencePieceOptions &o);

/// The byte a token string stands for under the ByteFallback decoder ("<0x"
/// two hex digits ">", either case), or -1.
int byteTokenValue(std::string_view token);
/// "<0xXX>" for byte b, as byte fallback spells it when encoding.
std::string byteTokenName(uint8_t b);

// Chat templates: "" (none), "chatml", "chatml:" + default system text,
// "llama3", "gemma", "gemma-nosystem", "mistral".
constexpr std::string_view kChatmlWithSystem = "chatml:";
/// Whether the runtime renders `chatTemplate` (ChatTemplate.h).
bool isKnownChatTemplate(std::string_view chatTemplate);

} // namespace ingot::tok
