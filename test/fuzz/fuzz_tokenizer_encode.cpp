//===- fuzz_tokenizer_encode.cpp - arbitrary text/ids -> a real tokenizer -===//
//
// The tokenizer is the one compiled into the micro model's artifact (built
// from test/fuzz/data/hf_micro). The first byte picks what the rest is:
// text to encode and decode again, token ids to decode (any int32, in range
// or not), or chat messages separated by NUL bytes.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "ingot/Tokenizer.h"

#include <cstring>

using namespace ingot;

namespace {

std::vector<ChatMessage> splitMessages(std::string_view rest) {
  static const char *roles[] = {"system", "user", "assistant"};
  std::vector<ChatMessage> messages;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t end = rest.find('\0', start);
    if (end == std::string_view::npos)
      end = rest.size();
    messages.push_back({roles[messages.size() % 3],
                        std::string(rest.substr(start, end - start))});
    start = end + 1;
  }
  return messages;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const Tokenizer &tok = fuzz::microTokenizer();
  const std::string_view rest(reinterpret_cast<const char *>(data) + 1,
                              size - 1);
  switch (data[0] % 3) {
  case 0: {
    const std::vector<int32_t> ids = tok.encode(rest, data[0] & 4);
    (void)tok.decode(ids);
    break;
  }
  case 1: {
    std::vector<int32_t> ids(rest.size() / 4);
    if (!ids.empty())
      std::memcpy(ids.data(), rest.data(), ids.size() * 4);
    (void)tok.decode(ids);
    for (int32_t id : ids)
      (void)tok.tokenBytes(id);
    break;
  }
  default: {
    std::string prompt;
    (void)tok.applyChatTemplate(splitMessages(rest), data[0] & 4, &prompt);
    break;
  }
  }
  return 0;
}
