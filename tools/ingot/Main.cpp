//===- Main.cpp - The `ingot` command-line tool ---------------------------===//
#include "Commands.h"
#include "ingot/AtomicFile.h"

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

using CommandMain = int (*)(int, char **);

/// A subcommand: its name, how it is called, what it does, and its entry
/// point (null when this build leaves it out; `missing` says why).
struct Command {
  const char *name, *synopsis, *summary;
  CommandMain main;
  const char *missing;
};

#ifdef INGOT_HAS_COMPILER
constexpr CommandMain kCompileMain = ingot::cli::compileMain;
#else
constexpr CommandMain kCompileMain = nullptr;
#endif
#ifdef INGOT_HAS_SERVER
constexpr CommandMain kServeMain = ingot::cli::serveMain;
#else
constexpr CommandMain kServeMain = nullptr;
#endif

constexpr Command kCommands[] = {
    {"compile", "MODEL -o OUT.ingot",
     "compile an ONNX model, a GGUF file or a Hugging Face directory",
     kCompileMain,
     "this ingot was built without the compiler (-DINGOT_ENABLE_COMPILER="
     "OFF); it can only run and inspect artifacts"},
    {"generate", "ART --prompt TEXT", "generate text with an LLM artifact",
     ingot::cli::generateMain, nullptr},
    {"run", "ART --input NAME=F.npy", "run a compiled artifact",
     ingot::cli::runMain, nullptr},
    {"inspect", "ART [--json]", "describe a compiled artifact",
     ingot::cli::inspectMain, nullptr},
    {"tokenize", "ART --text TEXT", "encode/decode with its tokenizer",
     ingot::cli::tokenizeMain, nullptr},
    {"profile", "ART",
     "time every step and kernel of a prefill + decode workload",
     ingot::cli::profileMain, nullptr},
    {"perplexity", "ART --text FILE",
     "perplexity of the model over a text, with sliding windows",
     ingot::cli::perplexityMain, nullptr},
    {"bench", "ART [workload]", "benchmark the serving engine",
     ingot::cli::benchMain, nullptr},
    {"serve", "ART [--port 8000]", "OpenAI-compatible HTTP server", kServeMain,
     "this ingot was built without the server (libcpp-httplib-dev and "
     "nlohmann-json3-dev were not found; scripts/deps.sh installs them)"},
};

void printUsage(FILE *to) {
  std::fprintf(to, "usage: ingot <command> [options]\n\ncommands:\n");
  for (const Command &c : kCommands)
    std::fprintf(to, "  %-10s %-24s %s%s\n", c.name, c.synopsis, c.summary,
                 c.main ? "" : " (not in this build)");
  std::fprintf(to, "\nRun 'ingot <command> --help' for a command's "
                   "options.\n");
}

/// The subcommand named `cmd`, or null.
const Command *findCommand(const char *cmd) {
  for (const Command &c : kCommands)
    if (!std::strcmp(cmd, c.name))
      return &c;
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
    printUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  // An interrupted compile or bench removes its temp file; a full disk is
  // an error message, not SIGXFSZ.
  ingot::installTempFileCleanup();
  const Command *command = findCommand(cmd);
  if (command && command->main)
    return runGuarded(command->main, cmd, argc - 1, argv + 1);
  if (command) {
    std::fprintf(stderr, "error: %s\n", command->missing);
    return 1;
  }
  std::fprintf(stderr, "error: unknown command '%s'\n\n", cmd);
  printUsage(stderr);
  return 2;
}
