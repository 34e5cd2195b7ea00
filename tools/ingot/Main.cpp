//===- Main.cpp - The `ingot` command-line tool ---------------------------===//
#include "Commands.h"
#include "ingot/AtomicFile.h"

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

void printUsage() {
  std::fprintf(stderr,
               "usage: ingot <command> [options]\n\n"
               "commands:\n"
               "  compile MODEL -o OUT.ingot   compile an ONNX model or a Hugging\n"
               "                               Face directory\n"
               "  generate ART --prompt TEXT   generate text with an LLM artifact\n"
               "  run ART --input NAME=F.npy   run a compiled artifact\n"
               "  inspect ART [--json]         describe a compiled artifact\n"
               "  tokenize ART --text TEXT     encode/decode with its tokenizer\n"
               "  profile ART                  time every step and kernel of a\n"
               "                               prefill + decode workload\n"
               "  perplexity ART --text FILE   perplexity of the model over a\n"
               "                               text, with sliding windows\n"
               "  bench ART [workload]         benchmark the serving engine\n"
               "  serve ART [--port 8000]      OpenAI-compatible HTTP server\n\n"
               "Run 'ingot <command> --help' for a command's options.\n");
}

/// The subcommand named `cmd`, or null.
using CommandMain = int (*)(int, char **);
CommandMain findCommand(const char *cmd) {
  static const struct {
    const char *name;
    CommandMain main;
  } commands[] = {
#ifdef INGOT_HAS_COMPILER
      {"compile", ingot::cli::compileMain},
#endif
#ifdef INGOT_HAS_SERVER
      {"serve", ingot::cli::serveMain},
#endif
      {"run", ingot::cli::runMain},
      {"inspect", ingot::cli::inspectMain},
      {"generate", ingot::cli::generateMain},
      {"tokenize", ingot::cli::tokenizeMain},
      {"bench", ingot::cli::benchMain},
      {"profile", ingot::cli::profileMain},
      {"perplexity", ingot::cli::perplexityMain},
  };
  for (const auto &c : commands)
    if (!std::strcmp(cmd, c.name))
      return c.main;
  return nullptr;
}

/// A last-resort net: the commands report every failure they know of as a
/// Status; an exception that still escapes (a thread that cannot start, an
/// allocation that fails) is a bug to report, but never an abort.
int runGuarded(CommandMain main, const char *cmd, int argc, char **argv) {
  try {
    return main(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s: internal error: %s\n", cmd, e.what());
  } catch (...) {
    std::fprintf(stderr, "error: %s: internal error: unknown exception\n",
                 cmd);
  }
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    printUsage();
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  // An interrupted compile or bench removes its temp file; a full disk is
  // an error message, not SIGXFSZ.
  ingot::installTempFileCleanup();
  if (CommandMain main = findCommand(cmd))
    return runGuarded(main, cmd, argc - 1, argv + 1);
#ifndef INGOT_HAS_COMPILER
  if (!std::strcmp(cmd, "compile")) {
    std::fprintf(stderr, "error: this ingot was built without the compiler "
                         "(-DINGOT_ENABLE_COMPILER=OFF); it can only run and "
                         "inspect artifacts\n");
    return 1;
  }
#endif
#ifndef INGOT_HAS_SERVER
  if (!std::strcmp(cmd, "serve")) {
    std::fprintf(stderr, "error: this ingot was built without the server "
                         "(libcpp-httplib-dev and nlohmann-json3-dev were not "
                         "found; scripts/deps.sh installs them)\n");
    return 1;
  }
#endif
  std::fprintf(stderr, "error: unknown command '%s'\n\n", cmd);
  printUsage();
  return 2;
}
