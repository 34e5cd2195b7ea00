//===- ChatTemplate.h - The chat formats ingot renders natively -*- C++ -*-===//
//
// Models ship a Jinja chat template; ingot does not run Jinja, it recognises
// the families these models use at compile time and renders them here.
// TokenizerData::chatTemplate holds:
//   ""              none recognised (chat is an error)
//   "chatml"        <|im_start|>{role}\n{content}<|im_end|>\n ...
//   "chatml:" TEXT  chatml whose template inserts a default system message
//                   TEXT when the conversation does not start with one
//                   (SmolLM2, Qwen2)
//   "llama3"        <|begin_of_text|><|start_header_id|>{role}
//                   <|end_header_id|>\n\n{content, trimmed}<|eot_id|> ...
//   "gemma"         <bos><start_of_turn>{user|model}\n{content, trimmed}
//                   <end_of_turn>\n ..., a system message before the first
//                   user content (Gemma 3); "gemma-nosystem" refuses one
//                   (Gemma 2)
//   "mistral"       <s>[INST] {user} [/INST]{assistant}</s>[INST] ...
//                   (Mistral-7B-Instruct's template: user/assistant
//                   alternating, no system message)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"
#include "ingot/Tokenizer.h"
#include "ingot/TokenizerFormat.h"

#include <string>
#include <string_view>
#include <vector>

namespace ingot::tok {

/// Renders `messages` as the model's template would with the given
/// add_generation_prompt; `bosToken` and `eosToken` are the texts of those
/// tokens where the template writes them.
Status renderChat(std::string_view chatTemplate, std::string_view bosToken,
                  std::string_view eosToken,
                  const std::vector<ChatMessage> &messages,
                  bool addGenerationPrompt, std::string *out);

} // namespace ingot::tok
