//===- ServeCommand.cpp - `ingot serve` -----------------------------------===//
//
// Loads an LLM artifact, starts the engine and the OpenAI-compatible server,
// then waits for SIGINT/SIGTERM: on one it drains (new requests get 503,
// running ones get --drain-timeout seconds to finish) and exits 0. The
// signals are blocked before any thread starts and taken with sigwait, so
// no handler runs inside the engine or the HTTP library.
//
//===----------------------------------------------------------------------===//
#include "CliChecks.h"
#include "CliNumbers.h"
#include "Commands.h"

#include "Server.h"
#include "ingot/Artifact.h"
#include "ingot/Engine.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ingot::cli {
namespace {

void printServeUsage() {
  std::fprintf(
      stderr,
      "usage: ingot serve ART.ingot [--host 127.0.0.1] [--port 8000]\n"
      "         [--api-key KEY] [--served-model-name NAME[,NAME]]\n"
      "         [--max-queue N] [--max-body-bytes N] [--drain-timeout S]\n"
      "         [--threads N] [--kv-blocks N | --kv-cache-mb M]\n"
      "         [--max-tokens-per-step N] [--max-seqs N] [--no-prefix-caching]\n"
      "         [--kv-cache-dtype auto|float32|int8|fp8] [--no-kv-prefault]\n\n"
      "  OpenAI-compatible: POST /v1/completions, POST /v1/chat/completions\n"
      "  (\"stream\": true for server-sent events), GET /v1/models, GET\n"
      "  /health, GET /metrics (Prometheus). --port 0 picks a free port; the\n"
      "  address is printed on stdout. --api-key (or INGOT_API_KEY) makes\n"
      "  every /v1 request send 'Authorization: Bearer KEY'. --max-queue\n"
      "  bounds the requests waiting beyond --max-seqs (then 503). The KV\n"
      "  budget is committed at start unless --no-kv-prefault.\n"
      "  SIGINT/SIGTERM: new requests get 503, running ones have\n"
      "  --drain-timeout seconds (default 30) to finish, then exit 0.\n"
      "  --threads 0 (the default) uses every core; at most 1024.\n");
}

/// A server commits its KV budget at start (--no-kv-prefault: as used).
EngineOptions servingDefaults() {
  EngineOptions o;
  o.kvPrefault = true;
  return o;
}

struct ServeArgs {
  std::string artifact;
  server::ServerOptions server;
  EngineOptions engine = servingDefaults();
  int64_t port = 8000, threads = 0; // copied into the options once parsed
};

bool splitNames(const std::string &list, std::vector<std::string> *out) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string name = list.substr(pos, comma - pos);
    if (name.empty())
      return false;
    out->push_back(name);
    if (comma == std::string::npos)
      return true;
    pos = comma + 1;
  }
  return false;
}

/// Integer flags: name, destination, smallest and largest accepted value.
bool integerFlag(const std::string &arg, const char *value, ServeArgs *a,
                 bool *known) {
  struct Flag {
    const char *name;
    int64_t *dest;
    int64_t min, max;
  };
  Flag flags[] = {
      {"--port", &a->port, 0, 65535},
      {"--max-queue", &a->server.maxQueue, 0, 1 << 20},
      {"--max-body-bytes", &a->server.maxBodyBytes, 1024, int64_t(1) << 32},
      {"--threads", &a->threads, 0, kMaxThreads},
      {"--kv-blocks", &a->engine.kvBlocks, 1, kMaxKvBlocks},
      {"--kv-cache-mb", &a->engine.kvCacheMb, 1, kMaxKvCacheMb},
      {"--max-tokens-per-step", &a->engine.maxTokensPerStep, 1,
       kMaxTokensPerStep},
      {"--max-seqs", &a->engine.maxSeqs, 1, kMaxSeqs},
  };
  *known = false;
  for (const Flag &f : flags) {
    if (arg != f.name)
      continue;
    *known = true;
    std::string error;
    if (!parseFlagInt(f.name, value, f.min, f.max, f.dest, &error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return false;
    }
  }
  return true;
}

/// 0 ok, else the exit code of a usage error (message printed).
int parseServeArgs(int argc, char **argv, ServeArgs *a) {
  if (const char *key = std::getenv("INGOT_API_KEY"))
    a->server.apiKey = key;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool known = false;
    if (!integerFlag(arg, value, a, &known))
      return 2;
    if (known) {
      ++i;
    } else if (arg == "--host" && value) {
      a->server.host = argv[++i];
    } else if (arg == "--api-key" && value) {
      a->server.apiKey = argv[++i];
    } else if (arg == "--served-model-name" && value) {
      if (!splitNames(argv[++i], &a->server.modelNames)) {
        std::fprintf(stderr, "error: --served-model-name has an empty name\n");
        return 2;
      }
    } else if (arg == "--drain-timeout" && value) {
      char *end = nullptr;
      a->server.drainTimeoutS = std::strtod(argv[++i], &end);
      if (*end || !(a->server.drainTimeoutS >= 0 &&
                    a->server.drainTimeoutS <= 86400)) {
        std::fprintf(stderr, "error: --drain-timeout needs seconds in "
                             "[0, 86400]\n");
        return 2;
      }
    } else if (arg == "--kv-cache-dtype" && value) {
      a->engine.kvCacheDtype = argv[++i];
    } else if (arg == "--no-kv-prefault") {
      a->engine.kvPrefault = false;
    } else if (arg == "--no-prefix-caching") {
      a->engine.prefixCaching = false;
    } else if (arg == "--help" || arg == "-h") {
      printServeUsage();
      return -1;
    } else if (arg[0] != '-' && a->artifact.empty()) {
      a->artifact = arg;
    } else {
      std::fprintf(stderr, "error: unknown or incomplete argument '%s'\n\n",
                   arg.c_str());
      printServeUsage();
      return 2;
    }
  }
  if (a->artifact.empty()) {
    printServeUsage();
    return 2;
  }
  a->server.port = int(a->port);
  a->engine.threads = unsigned(a->threads);
  if (a->engine.kvBlocks && a->engine.kvCacheMb) {
    std::fprintf(stderr, "error: give at most one of --kv-blocks and "
                         "--kv-cache-mb\n");
    return 2;
  }
  return 0;
}

} // namespace

int serveMain(int argc, char **argv) {
  ServeArgs a;
  if (int rc = parseServeArgs(argc, argv, &a))
    return rc < 0 ? 0 : rc;
  // Before any thread exists, so that every thread inherits the mask.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  std::signal(SIGPIPE, SIG_IGN); // a client that left is a failed write

  std::unique_ptr<Artifact> artifact;
  if (Status s = Artifact::open(a.artifact, &artifact); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  if (std::string e = kvCacheMbError(artifact->manifest().llm,
                                     a.engine.kvCacheMb);
      !e.empty()) {
    std::fprintf(stderr, "error: %s\n", e.c_str());
    return 1;
  }
  std::unique_ptr<Engine> engine;
  if (Status s = Engine::create(*artifact, a.engine, &engine); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  auto server = std::make_unique<server::Server>(*engine, *artifact, a.server);
  if (Status s = server->bind(); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  server->start();
  std::printf("ingot serve: listening on http://%s:%d (KV cache: %s, %s)\n",
              a.server.host.c_str(), server->port(),
              engine->describeBudget().c_str(),
              a.engine.kvPrefault ? "committed; --kv-cache-mb bounds it"
                                  : "committed as used");
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stopSignals, &signal);
  std::fprintf(stderr, "ingot serve: %s: draining (up to %g s)\n",
               strsignal(signal), a.server.drainTimeoutS);
  int64_t left = server->drain();
  if (left)
    std::fprintf(stderr, "ingot serve: %lld requests still running after the "
                         "drain timeout; cancelling them\n", (long long)left);
  server->stop();
  server.reset(); // before the engine it refers to
  engine.reset();
  std::fprintf(stderr, "ingot serve: stopped\n");
  return 0;
}

} // namespace ingot::cli
