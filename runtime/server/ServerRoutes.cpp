//===- ServerRoutes.cpp - /v1/completions and /v1/chat/completions --------===//
//
// A request is parsed and checked, admitted against the queue bound, and
// submitted as one engine request per choice. Without `stream` the handler
// gathers every event and answers once; with it, a chunked response writes
// one server-sent event per token as it arrives. A failed write means the
// client left: the response is abandoned, which destroys its
// GenerationStream and so cancels its engine requests.
//
//===----------------------------------------------------------------------===//
#include "GenerationStream.h"
#include "OpenAiResponse.h"
#include "PeerSocket.h"
#include "ServerImpl.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace ingot::server {
namespace {

using std::chrono::milliseconds;

// How long a handler waits for a token before it probes the connection.
constexpr milliseconds kIdleProbe{1000};

/// One choice's results and the timing the metrics need.
struct ChoiceTracker {
  ChoiceResult result;
  double firstMs = -1, lastMs = -1;
  std::string engineReason; // set once the final event arrived
  std::string error;

  void absorb(const TokenEvent &e, ServerMetrics &metrics) {
    result.text += e.text;
    if (e.token >= 0) {
      result.tokens.push_back(e);
      if (lastMs >= 0)
        metrics.interTokenLatency((e.timeMs - lastMs) / 1000.0);
      if (firstMs < 0)
        firstMs = e.timeMs;
      lastMs = e.timeMs;
    }
    if (!e.finished)
      return;
    engineReason = e.finishReason;
    error = e.error;
    result.finishReason = openAiFinishReason(e.finishReason);
    metrics.requestFinished(result.finishReason, firstMs / 1000.0,
                            e.timeMs / 1000.0, int64_t(result.tokens.size()));
  }
};

/// Everything a streamed response needs after the handler has returned.
struct StreamState {
  Server::Impl *server = nullptr;
  CompletionRequest request;
  ResponseId rid;
  std::unique_ptr<GenerationStream> stream;
  std::vector<ChoiceTracker> choices;
  std::vector<bool> started;

  ~StreamState() {
    if (!server)
      return;
    // The client left before the end: its final events will never be
    // read, so count those choices as aborted here.
    for (ChoiceTracker &c : choices)
      if (c.engineReason.empty())
        server->metrics.requestFinished("abort", c.firstMs / 1000.0,
                                        std::max(c.lastMs, 0.0) / 1000.0,
                                        int64_t(c.result.tokens.size()));
    stream.reset(); // cancels whatever has not finished
    server->release(request.choices.size());
  }
};

std::string sse(const std::string &data) { return "data: " + data + "\n\n"; }

ApiError engineError(const std::string &message) {
  ApiError e;
  e.status = 500;
  e.type = "server_error";
  e.message = message;
  return e;
}

/// Writes the next event (or a keep-alive comment); false if the client left.
bool writeNext(StreamState &st, httplib::DataSink &sink) {
  ChoiceEvent ev;
  if (st.server->stopping)
    st.stream->cancel();
  if (!st.stream->next(&ev, kIdleProbe))
    return sink.write(": keep-alive\n\n", 14);
  ChoiceTracker &c = st.choices[ev.choice];
  c.absorb(ev.event, st.server->metrics);
  const Tokenizer &tok = st.server->engine.tokenizer();
  std::string out =
      c.engineReason == "error"
          ? sse(errorBody(engineError(c.error)))
          : sse(chunkBody(st.request, st.rid, ev.choice, ev.event,
                          !st.started[ev.choice], tok));
  st.started[ev.choice] = true;
  if (st.stream->done()) {
    if (st.request.includeUsage) {
      int64_t prompt = 0, completion = 0;
      for (const ChoiceTracker &t : st.choices) {
        prompt += t.result.promptTokens;
        completion += int64_t(t.result.tokens.size());
      }
      out += sse(usageChunkBody(st.request, st.rid, prompt, completion));
    }
    out += sse("[DONE]");
  }
  if (!sink.write(out.data(), out.size()))
    return false;
  if (st.stream->done())
    sink.done();
  return true;
}

} // namespace

void Server::Impl::handleGeneration(const httplib::Request &req,
                                    httplib::Response &res, bool chat) {
  auto st = std::make_shared<StreamState>();
  ApiError err;
  if (!parseCompletionRequest(req.body, chat, model, &st->request, &err))
    return replyError(res, err);
  const size_t n = st->request.choices.size();
  if (!admit(n, res))
    return;
  st->server = this; // from here on ~StreamState releases the admission
  if (Status s = GenerationStream::start(engine, st->request, &st->stream); !s) {
    err.message = s.message();
    return replyError(res, err);
  }
  char id[32];
  std::snprintf(id, sizeof(id), "%016llx",
                (unsigned long long)nextResponseId.fetch_add(1));
  st->rid = {(chat ? "chatcmpl-" : "cmpl-") + std::string(id),
             int64_t(std::time(nullptr)), st->request.model};
  st->choices.resize(n);
  st->started.assign(n, false);
  for (size_t i = 0; i < n; ++i)
    st->choices[i].result.promptTokens =
        int64_t(st->request.choices[i].promptTokens.size());
  if (st->request.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [st](size_t, httplib::DataSink &sink) { return writeNext(*st, sink); });
    return;
  }
  ChoiceEvent ev;
  const int fd = findConnectionSocket(req.remote_addr, req.remote_port,
                                      req.local_addr, req.local_port);
  bool clientLeft = false;
  while (!st->stream->done()) {
    if (stopping || (!clientLeft && fd >= 0 && peerClosed(fd))) {
      clientLeft = !stopping;
      st->stream->cancel(); // its final events still arrive and are counted
    }
    if (st->stream->next(&ev, kIdleProbe))
      st->choices[ev.choice].absorb(ev.event, metrics);
  }
  if (clientLeft) {
    res.status = 499; // nginx's "client closed request", for the counters
    return;
  }
  std::vector<ChoiceResult> results;
  for (ChoiceTracker &c : st->choices) {
    if (c.engineReason == "error")
      return replyError(res, engineError(c.error));
    results.push_back(std::move(c.result));
  }
  reply(res, 200,
        completionBody(st->request, st->rid, results, engine.tokenizer()));
}

void Server::Impl::installGenerationRoutes() {
  http.Post("/v1/completions",
            [this](const httplib::Request &req, httplib::Response &res) {
              handleGeneration(req, res, /*chat=*/false);
            });
  http.Post("/v1/chat/completions",
            [this](const httplib::Request &req, httplib::Response &res) {
              handleGeneration(req, res, /*chat=*/true);
            });
}

} // namespace ingot::server
