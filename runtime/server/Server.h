//===- Server.h - `ingot serve`: OpenAI-compatible HTTP front ---*- C++ -*-===//
//
// /v1/completions, /v1/chat/completions (streamed as server-sent events or
// not), /v1/models, /health and /metrics over one Engine. The HTTP layer is
// Debian's cpp-httplib; each connection is served on a pool thread that
// waits on its request's events, so the engine's step thread never blocks
// on a socket.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Artifact.h"
#include "ingot/Engine.h"
#include "ingot/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ingot::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;            // 0 = any free port (port() says which)
  std::string apiKey;         // non-empty: /v1 needs "Authorization: Bearer KEY"
  std::vector<std::string> modelNames; // empty = the artifact's file stem
  int64_t maxQueue = 256;     // waiting requests beyond the engine's max-seqs
  int64_t maxBodyBytes = 8 << 20;
  double drainTimeoutS = 30;
};

class Server {
public:
  Server(Engine &engine, const Artifact &artifact, ServerOptions options);
  ~Server();

  /// Binds the listening socket; an error names the address.
  Status bind();
  int port() const;
  /// Serves on a background thread until stop().
  void start();
  /// Refuses new generation requests with 503, waits up to drainTimeoutS
  /// for those in flight, then cancels the rest; returns how many it
  /// cancelled.
  int64_t drain();
  /// Closes the socket and every connection; joins the serving thread.
  void stop();

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot::server
