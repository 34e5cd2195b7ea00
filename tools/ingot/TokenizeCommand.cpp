//===- TokenizeCommand.cpp - `ingot tokenize`: the artifact's tokenizer ---===//
//
//   ingot tokenize ART (--text TEXT | --text-file F) [--add-bos] [--json]
//   ingot tokenize ART --decode 1,2,3 [--json]
//
// Encoding prints the ids comma-separated (or {"ids":[...]}); the text must
// be valid UTF-8 (an error names the first bad byte). Decoding prints the
// text the ids stand for, converted to valid UTF-8 the way Hugging Face
// `tokenizers` does it: each broken UTF-8 sequence (a token sequence cut in
// the middle of a character) becomes one U+FFFD; an id outside the
// vocabulary is an error. Both forms end with a newline.
//
//===----------------------------------------------------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"
#include "Commands.h"

#include "JsonWriter.h" // runtime-private helper
#include "ingot/Artifact.h"
#include "ingot/Tokenizer.h"
#include "tokenizer/Unicode.h" // runtime-private: toValidUtf8

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ingot::cli {
namespace {

void printUsage(FILE *f) {
  std::fprintf(
      f, "usage: ingot tokenize ART (--text TEXT | --text-file F) [--add-bos] "
         "[--json]\n"
         "       ingot tokenize ART --decode ID,ID,... [--json]\n\n"
         "Encodes text with the artifact's tokenizer and prints the token ids "
         "(comma-separated),\nor decodes ids and prints the text. "
         "--text-file - reads standard input.\n"
         "  --add-bos   start with the model's BOS token (if it has one)\n"
         "  --json      print {\"ids\": [...]} or {\"text\": ...}\n");
}

int usageError(const std::string &msg) {
  std::fprintf(stderr, "error: %s\n\n", msg.c_str());
  printUsage(stderr);
  return 2;
}

/// "1,2,3" (spaces allowed around ids; "" is no ids). Ids that do not fit in
/// an int64 are kInt64Max: out of every vocabulary, like any unknown id.
bool parseIds(const std::string &s, std::vector<int64_t> *ids) {
  size_t pos = 0;
  auto skipSpaces = [&] {
    while (pos < s.size() && s[pos] == ' ')
      ++pos;
  };
  skipSpaces();
  if (pos == s.size())
    return true;
  while (true) {
    skipSpaces();
    const char *begin = s.c_str() + pos;
    char *end;
    errno = 0;
    long long v = std::strtoll(begin, &end, 10);
    if (end == begin || *begin == '+' || *begin == ' ')
      return false;
    ids->push_back(errno == ERANGE ? kInt64Max : int64_t(v));
    pos += size_t(end - begin);
    skipSpaces();
    if (pos == s.size())
      return true;
    if (s[pos++] != ',')
      return false;
  }
}

} // namespace

int tokenizeMain(int argc, char **argv) {
  std::string artPath, text, decodeArg;
  bool haveText = false, haveDecode = false, addBos = false, json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](std::string *v) {
      if (i + 1 >= argc)
        return false;
      *v = argv[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      printUsage(stdout);
      return 0;
    } else if (a == "--text" || a == "--text-file") {
      if (haveText)
        return usageError("give --text or --text-file once");
      std::string v, error;
      if (!next(&v))
        return usageError(a + " needs a value");
      if (a == "--text")
        text = v;
      else if (!readWholeFile("--text-file " + v, v, &text, &error)) {
        std::fprintf(stderr, "error: %s\n", error.c_str());
        return 1;
      }
      if (std::string e = invalidUtf8Error(a, text); !e.empty()) {
        std::fprintf(stderr, "error: %s\n", e.c_str());
        return 1;
      }
      haveText = true;
    } else if (a == "--decode") {
      if (haveDecode || !next(&decodeArg))
        return usageError("--decode needs one list of ids");
      haveDecode = true;
    } else if (a == "--add-bos") {
      addBos = true;
    } else if (a == "--json") {
      json = true;
    } else if (!a.empty() && a[0] == '-') {
      return usageError("unknown option '" + a + "'");
    } else if (artPath.empty()) {
      artPath = a;
    } else {
      return usageError("unexpected argument '" + a + "'");
    }
  }
  if (artPath.empty())
    return usageError("missing the artifact");
  if (haveText == haveDecode)
    return usageError("give either --text/--text-file or --decode");
  if (haveDecode && addBos)
    return usageError("--add-bos only applies when encoding");
  std::vector<int64_t> decodeIds;
  if (haveDecode && !parseIds(decodeArg, &decodeIds))
    return usageError("--decode takes comma-separated integer ids, got '" +
                      decodeArg + "'");

  std::unique_ptr<Artifact> art;
  if (Status s = Artifact::open(artPath, &art); !s) {
    std::fprintf(stderr, "error: %s: %s\n", artPath.c_str(),
                 s.message().c_str());
    return 1;
  }
  if (!art->manifest().hasLlm) {
    std::fprintf(stderr,
                 "error: %s has no tokenizer (it was not compiled from a "
                 "Hugging Face language model)\n",
                 artPath.c_str());
    return 1;
  }
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status s = Tokenizer::create(art->manifest().tokenizer, &tokenizer); !s) {
    std::fprintf(stderr, "error: %s: %s\n", artPath.c_str(),
                 s.message().c_str());
    return 1;
  }

  std::vector<int32_t> ids;
  for (int64_t id : decodeIds) {
    if (id < 0 || id >= tokenizer->vocabSize()) {
      std::fprintf(stderr, "error: --decode: id %lld is outside the "
                   "vocabulary of %d tokens of %s (ids 0..%d)\n",
                   static_cast<long long>(id), tokenizer->vocabSize(),
                   artPath.c_str(), tokenizer->vocabSize() - 1);
      return 1;
    }
    ids.push_back(int32_t(id));
  }

  std::string out;
  json::Writer w(&out, /*indent=*/0);
  if (haveDecode) {
    std::string decoded = tok::toValidUtf8(tokenizer->decode(ids));
    if (json) {
      w.beginObject();
      w.field("text", decoded);
      w.endObject();
    } else {
      out = decoded;
    }
  } else {
    ids = tokenizer->encode(text, addBos);
    if (json) {
      w.beginObject();
      w.key("ids");
      w.beginArray(true);
      for (int32_t id : ids)
        w.value(id);
      w.endArray();
      w.endObject();
    } else {
      for (size_t i = 0; i < ids.size(); ++i)
        out += (i ? "," : "") + std::to_string(ids[i]);
    }
  }
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace ingot::cli
