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
#include "CliParser.h"
#include "Commands.h"

#include "Server.h"
#include "ingot/Artifact.h"
#include "ingot/Engine.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace ingot::cli {
namespace {

/// A server commits its KV budget at start (--no-kv-prefault: as used).
EngineOptions servingDefaults() {
  EngineOptions o;
  o.kvPrefault = true;
  return o;
}

struct ServeArgs {
  std::string artifact;
  std::string weightsDir; // --weights DIR (external weights)
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

/// The engine and server integer flags: name, destination, range, help.
void declareIntegerFlags(CommandLine &cl, ServeArgs *a) {
  cl.integer("--port", &a->port, 0, 65535, "TCP port; 0: any free one");
  cl.integer("--max-queue", &a->server.maxQueue, 0, 1 << 20,
             "requests waiting beyond --max-seqs before a 503");
  cl.integer("--max-body-bytes", &a->server.maxBodyBytes, 1024,
             int64_t(1) << 32, "largest request body");
  cl.integer("--threads", &a->threads, 0, kMaxThreads,
             "engine threads; 0: every core");
  cl.integer("--kv-blocks", &a->engine.kvBlocks, 1, kMaxKvBlocks,
             "KV-cache blocks (auto: from --kv-cache-mb)", "auto");
  cl.integer("--kv-cache-mb", &a->engine.kvCacheMb, 1, kMaxKvCacheMb,
             "KV-cache budget in MiB (auto: a share of free memory)", "auto");
  cl.integer("--max-tokens-per-step", &a->engine.maxTokensPerStep, 1,
             kMaxTokensPerStep, "tokens one engine step may process",
             "compiled");
  cl.integer("--max-seqs", &a->engine.maxSeqs, 1, kMaxSeqs,
             "sequences one step may hold", "compiled");
}

/// 0 ok, else the exit code of a usage error (message printed).
int parseServeArgs(int argc, char **argv, ServeArgs *a) {
  CommandLine cl("serve", "OpenAI-compatible HTTP server for an LLM artifact.");
  cl.footer(
      "POST /v1/completions, POST /v1/chat/completions (\"stream\": true for "
      "server-sent events), GET /v1/models, GET /health, GET /metrics "
      "(Prometheus). The address is printed on stdout. The KV budget is "
      "committed at start unless --no-kv-prefault. SIGINT/SIGTERM: new "
      "requests get 503, running ones have --drain-timeout seconds to "
      "finish, then exit 0.");
  cl.positional("ART", &a->artifact, "the compiled LLM artifact");
  cl.value("--host", &a->server.host, "address to listen on", "HOST");
  std::optional<std::string> apiKey;
  cl.value(
      "--api-key", [&apiKey](const std::string &v) { apiKey = v; },
      "every /v1 request must send 'Authorization: Bearer KEY'",
      "$INGOT_API_KEY", "KEY");
  cl.value(
      "--served-model-name",
      [a](const std::string &v) {
        if (!splitNames(v, &a->server.modelNames))
          throw FlagError("--served-model-name has an empty name");
      },
      "the model names /v1/models lists", "file-stem",
      "NAME[,NAME]");
  cl.value(
      "--drain-timeout",
      [a](const std::string &v) {
        char *end = nullptr;
        a->server.drainTimeoutS = std::strtod(v.c_str(), &end);
        if (*end || !(a->server.drainTimeoutS >= 0 &&
                      a->server.drainTimeoutS <= 86400))
          throw FlagError("--drain-timeout needs seconds in [0, 86400]");
      },
      "seconds running requests get after SIGINT/SIGTERM", "30", "S");
  declareIntegerFlags(cl, a);
  declareDeviceFlags(cl, &a->engine.device, &a->engine.gpuMemoryFraction);
  declareWeightsFlag(cl, &a->weightsDir);
  cl.value("--kv-cache-dtype", &a->engine.kvCacheDtype,
           "KV-cache element type: auto, float32, bfloat16, int8 or fp8");
  cl.flag("--no-kv-prefault", &a->engine.kvPrefault,
          "commit the KV budget as it is used, not at start", false);
  cl.flag("--no-prefix-caching", &a->engine.prefixCaching,
          "do not share KV blocks between prompts", false);
  if (int rc = cl.parse(argc, argv); rc >= 0)
    return rc == 0 ? -1 : rc;
  if (const char *key = std::getenv("INGOT_API_KEY"); key && !apiKey)
    apiKey = key;
  a->server.apiKey = apiKey.value_or("");
  if (a->artifact.empty())
    return cl.usageError("give an artifact");
  a->server.port = int(a->port);
  a->engine.threads = unsigned(a->threads);
  if (a->engine.kvBlocks && a->engine.kvCacheMb)
    return cl.usageError("give at most one of --kv-blocks and --kv-cache-mb");
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
  if (Status s = Artifact::open(a.artifact, &artifact, {a.weightsDir}); !s) {
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
  if (!engine->deviceNote().empty())
    std::fprintf(stderr, "ingot: %s\n", engine->deviceNote().c_str());
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
