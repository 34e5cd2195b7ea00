//===- ChatTemplate.cpp - The chat formats ingot renders natively ---------===//
#include "ChatTemplate.h"

#include "Unicode.h"

namespace ingot::tok {
namespace {

/// Jinja's `trim` filter is Python's str.strip(): White_Space plus the four
/// information separators U+001C-U+001F, which Python also counts as space.
bool isPythonSpace(uint32_t cp) {
  return isWhiteSpace(cp) || (cp >= 0x1c && cp <= 0x1f);
}

std::string_view trimPython(std::string_view s) {
  size_t begin = s.size(), end = 0;
  for (size_t pos = 0; pos < s.size();) {
    size_t at = pos;
    if (!isPythonSpace(nextChar(s, &pos))) {
      begin = begin == s.size() ? at : begin;
      end = pos;
    }
  }
  return begin < end ? s.substr(begin, end - begin) : std::string_view();
}

/// Gemma's turns: BOS, then <start_of_turn>{user|model}\n{content, trimmed}
/// <end_of_turn>\n, strictly alternating from the user. Gemma 3 puts a
/// leading system message before the first user turn's content (untrimmed,
/// then a blank line); Gemma 2's template ("gemma-nosystem") refuses one.
Status renderGemma(bool systemAllowed, std::string_view bos,
                   const std::vector<ChatMessage> &messages,
                   bool addGenerationPrompt, std::string *out) {
  std::string s(bos), prefix;
  size_t first = 0;
  if (!messages.empty() && messages[0].role == "system") {
    if (!systemAllowed)
      return Status::error("this model's chat template does not support a "
                           "system message");
    prefix = messages[0].content + "\n\n";
    first = 1;
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage &m = messages[i];
    if ((m.role == "user") != ((i - first) % 2 == 0) ||
        (m.role != "user" && m.role != "assistant"))
      return Status::error("this model's chat template needs the roles to "
                           "alternate user/assistant/user/..., got '" +
                           m.role + "' as message " + std::to_string(i + 1));
    s += "<start_of_turn>";
    s += m.role == "assistant" ? "model" : "user";
    s += "\n";
    if (i == first)
      s += prefix;
    s += trimPython(m.content);
    s += "<end_of_turn>\n";
  }
  if (addGenerationPrompt)
    s += "<start_of_turn>model\n";
  *out = std::move(s);
  return Status::ok();
}

/// Mistral-7B-Instruct: BOS, "[INST] user [/INST]" and "assistant</s>",
/// alternating from the user; its template raises on anything else (and
/// has no add_generation_prompt branch: the [/INST] is the prompt).
Status renderMistral(std::string_view bos, std::string_view eos,
                     const std::vector<ChatMessage> &messages,
                     std::string *out) {
  std::string s(bos);
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage &m = messages[i];
    if ((m.role == "user") != (i % 2 == 0) ||
        (m.role != "user" && m.role != "assistant"))
      return Status::error("this model's chat template needs the roles to "
                           "alternate user/assistant/user/..., got '" +
                           m.role + "' as message " + std::to_string(i + 1));
    if (m.role == "user")
      s += "[INST] " + m.content + " [/INST]";
    else
      s += m.content + std::string(eos);
  }
  *out = std::move(s);
  return Status::ok();
}

} // namespace

Status renderChat(std::string_view chatTemplate, std::string_view bosToken,
                  std::string_view eosToken,
                  const std::vector<ChatMessage> &messages,
                  bool addGenerationPrompt, std::string *out) {
  std::string s;
  bool withSystem =
      chatTemplate.substr(0, kChatmlWithSystem.size()) == kChatmlWithSystem;
  if (chatTemplate == "chatml" || withSystem) {
    // The default system message is emitted inside the template's message
    // loop, so an empty conversation gets none.
    if (withSystem && !messages.empty() && messages[0].role != "system") {
      s += "<|im_start|>system\n";
      s += chatTemplate.substr(kChatmlWithSystem.size());
      s += "<|im_end|>\n";
    }
    for (const ChatMessage &m : messages)
      s += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    if (addGenerationPrompt)
      s += "<|im_start|>assistant\n";
  } else if (chatTemplate == "llama3") {
    if (!messages.empty())
      s += bosToken;
    for (const ChatMessage &m : messages) {
      s += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
      s += trimPython(m.content);
      s += "<|eot_id|>";
    }
    if (addGenerationPrompt)
      s += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  } else if (chatTemplate == "mistral") {
    return renderMistral(bosToken, eosToken, messages, out);
  } else if (chatTemplate == "gemma" || chatTemplate == "gemma-nosystem") {
    return renderGemma(chatTemplate == "gemma", bosToken, messages,
                       addGenerationPrompt, out);
  } else if (chatTemplate.empty()) {
    return Status::error("this model has no chat template that ingot "
                         "recognises (supported: chatml, llama3, gemma, mistral); "
                         "give the prompt as plain text instead");
  } else {
    return Status::error("unknown chat template '" +
                         std::string(chatTemplate.substr(0, 40)) + "'");
  }
  *out = std::move(s);
  return Status::ok();
}

} // namespace ingot::tok
