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
#include "CliParser.h"
#include "CliNumbers.h"
#include "Commands.h"

#include "JsonText.h"
#include "ingot/Artifact.h"
#include "ingot/Tokenizer.h"
#include "ingot/Utf8.h" // toValidUtf8

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ingot::cli {
namespace {

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

/// The text to encode: --text as given, or --text-file's contents; 0, or
/// the exit code after printing the error.
int readText(const CommandLine &cl, const std::vector<std::string> &texts,
             const std::vector<std::string> &files, std::string *text) {
  if (texts.size() + files.size() != 1)
    return cl.usageError("give --text or --text-file once");
  std::string error;
  if (!texts.empty())
    *text = texts[0];
  else if (!readWholeFile("--text-file " + files[0], files[0], text, &error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  if (std::string e = invalidUtf8Error(texts.empty() ? "--text-file" : "--text",
                                       *text);
      !e.empty()) {
    std::fprintf(stderr, "error: %s\n", e.c_str());
    return 1;
  }
  return 0;
}

} // namespace

int tokenizeMain(int argc, char **argv) {
  std::string artPath, text;
  std::vector<std::string> texts, textFiles, decodes;
  bool addBos = false, json = false;
  auto into = [](std::vector<std::string> *list) {
    return [list](const std::string &v) { list->push_back(v); };
  };
  CommandLine cl("tokenize",
                 "Encodes text with the artifact's tokenizer and prints the "
                 "token ids (comma-separated), or decodes ids and prints the "
                 "text.");
  cl.positional("ART", &artPath, "the compiled LLM artifact");
  cl.value("--text", into(&texts), "the text to encode", "");
  cl.value("--text-file", into(&textFiles),
           "a file with the text to encode (-: standard input)", "", "FILE");
  cl.value("--decode", into(&decodes), "the ids to decode", "", "ID,ID,...",
           "--decode needs one list of ids");
  cl.flag("--add-bos", &addBos,
          "start with the model's BOS token (if it has one)");
  cl.flag("--json", &json, "print {\"ids\": [...]} or {\"text\": ...}");
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc;
  if (artPath.empty())
    return cl.usageError("missing the artifact");
  const bool haveDecode = !decodes.empty();
  if (haveDecode == !(texts.empty() && textFiles.empty()))
    return cl.usageError("give either --text/--text-file or --decode");
  if (decodes.size() > 1)
    return cl.usageError("--decode needs one list of ids");
  if (haveDecode && addBos)
    return cl.usageError("--add-bos only applies when encoding");
  if (!haveDecode)
    if (int rc = readText(cl, texts, textFiles, &text))
      return rc;
  std::vector<int64_t> decodeIds;
  if (haveDecode && !parseIds(decodes[0], &decodeIds))
    return cl.usageError("--decode takes comma-separated integer ids, got '" +
                         decodes[0] + "'");
  std::unique_ptr<Artifact> art;
  if (Status s = Artifact::open(artPath, &art, {.skipExternalWeights = true});
      !s) {
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
  if (haveDecode) {
    std::string decoded = tok::toValidUtf8(tokenizer->decode(ids));
    if (json) {
      out = jsonText({{"text", decoded}});
    } else {
      out = decoded;
    }
  } else {
    ids = tokenizer->encode(text, addBos);
    if (json) {
      out = jsonText({{"ids", ids}});
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
