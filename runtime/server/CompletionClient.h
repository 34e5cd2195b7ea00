//===- CompletionClient.h - Streaming completions over HTTP -----*- C++ -*-===//
//
// The client side of `ingot bench --endpoint`: sends requests to an
// OpenAI-compatible server (ingot's, vLLM's, llama-server's) as streamed
// /v1/completions with token-id prompts, and reports each streamed token as
// a TokenEvent timed on this side of the connection, so the in-process and
// over-HTTP benchmarks share one accounting.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Engine.h"
#include "ingot/Status.h"

#include <map>
#include <memory>
#include <string>

namespace ingot::server {

class CompletionClient {
public:
  /// Asks `url` (http://HOST:PORT) for its model list; an error names the
  /// address and what went wrong.
  static Status connect(const std::string &url, const std::string &apiKey,
                        std::unique_ptr<CompletionClient> *out);
  ~CompletionClient(); // waits for every request it started

  /// Starts one streamed request on a thread of its own; `callback` gets a
  /// token event per streamed token and a final one, as from
  /// Engine::submit. Uses promptTokens, maxNewTokens, ignoreEos and the
  /// sampling temperature.
  Status submit(const RequestParams &request, TokenCallback callback);
  const std::string &model() const;
  /// The unlabelled samples of the server's /metrics, by name; empty if
  /// it has none (another server).
  std::map<std::string, double> metrics() const;

private:
  CompletionClient();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ingot::server
