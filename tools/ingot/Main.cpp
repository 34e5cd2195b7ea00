//===- Main.cpp - The `ingot` command-line tool ---------------------------===//
#include "Commands.h"

#include <cstdio>
#include <cstring>

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

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    printUsage();
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  if (!std::strcmp(cmd, "compile")) {
#ifdef INGOT_HAS_COMPILER
    return ingot::cli::compileMain(argc - 1, argv + 1);
#else
    std::fprintf(stderr, "error: this ingot was built without the compiler "
                         "(-DINGOT_ENABLE_COMPILER=OFF); it can only run and "
                         "inspect artifacts\n");
    return 1;
#endif
  }
  if (!std::strcmp(cmd, "run"))
    return ingot::cli::runMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "inspect"))
    return ingot::cli::inspectMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "generate"))
    return ingot::cli::generateMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "tokenize"))
    return ingot::cli::tokenizeMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "bench"))
    return ingot::cli::benchMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "profile"))
    return ingot::cli::profileMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "perplexity"))
    return ingot::cli::perplexityMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "serve")) {
#ifdef INGOT_HAS_SERVER
    return ingot::cli::serveMain(argc - 1, argv + 1);
#else
    std::fprintf(stderr, "error: this ingot was built without the server "
                         "(libcpp-httplib-dev and nlohmann-json3-dev were not "
                         "found; scripts/deps.sh installs them)\n");
    return 1;
#endif
  }
  std::fprintf(stderr, "error: unknown command '%s'\n\n", cmd);
  printUsage();
  return 2;
}
