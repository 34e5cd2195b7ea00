//===- Server.cpp - Lifecycle, auth, admission and the simple routes ------===//
#include "ServerImpl.h"

#include "OpenAiResponse.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>

namespace ingot::server {
namespace {

std::string fileStem(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

/// A bounded label for the status counter (no path explosion).
std::string pathLabel(const std::string &path) {
  for (const char *known : {"/v1/completions", "/v1/chat/completions",
                            "/v1/models", "/health", "/metrics"})
    if (path == known)
      return path;
  return "other";
}

std::string statusMessage(int status) {
  switch (status) {
  case 404: return "no such endpoint";
  case 405: return "method not allowed";
  case 413: return "the request body is larger than the server accepts";
  default: return "HTTP error " + std::to_string(status);
  }
}

} // namespace

Server::Impl::Impl(Engine &engine, const Artifact &artifact,
                   ServerOptions opts)
    : engine(engine), options(std::move(opts)) {
  if (options.modelNames.empty())
    options.modelNames.push_back(fileStem(artifact.path()));
  model.names = options.modelNames;
  model.tokenizer = &engine.tokenizer();
  model.vocab = int32_t(artifact.manifest().llm.vocabSize);
  model.context = engine.contextLength();
}

bool Server::Impl::authorised(const httplib::Request &req,
                              httplib::Response &res) {
  if (options.apiKey.empty() || req.path.rfind("/v1", 0) != 0)
    return true;
  if (req.get_header_value("Authorization") == "Bearer " + options.apiKey)
    return true;
  ApiError e;
  e.status = 401;
  e.type = "authentication_error";
  e.code = "invalid_api_key";
  e.message = req.has_header("Authorization")
                  ? "the API key is not valid"
                  : "an API key is required: send 'Authorization: Bearer KEY'";
  replyError(res, e);
  return false;
}

bool Server::Impl::admit(size_t n, httplib::Response &res) {
  ApiError e;
  e.status = 503;
  e.type = "server_error";
  {
    std::lock_guard<std::mutex> lock(inflightMu);
    const int64_t capacity = engine.stats().maxSeqs + options.maxQueue;
    if (!draining && inflight + int64_t(n) <= capacity) {
      inflight += int64_t(n);
      return true;
    }
    e.message = draining ? "the server is shutting down"
                         : "the server is full: " + std::to_string(inflight) +
                               " requests in flight (max-seqs + max-queue = " +
                               std::to_string(capacity) + "); retry later";
    e.code = draining ? "shutting_down" : "queue_full";
  }
  res.set_header("Retry-After", "1");
  replyError(res, e);
  return false;
}

void Server::Impl::release(size_t n) {
  {
    std::lock_guard<std::mutex> lock(inflightMu);
    inflight -= int64_t(n);
  }
  inflightChanged.notify_all();
}

void Server::Impl::reply(httplib::Response &res, int status,
                         const std::string &body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void Server::Impl::replyError(httplib::Response &res, const ApiError &error) {
  reply(res, error.status, errorBody(error));
}

void Server::Impl::installRoutes() {
  http.set_pre_routing_handler([this](const httplib::Request &req,
                                      httplib::Response &res) {
    return authorised(req, res) ? httplib::Server::HandlerResponse::Unhandled
                                : httplib::Server::HandlerResponse::Handled;
  });
  http.set_error_handler([this](const httplib::Request &, httplib::Response &res) {
    if (!res.body.empty())
      return;
    ApiError e;
    e.status = res.status;
    e.message = statusMessage(res.status);
    e.type = res.status >= 500 ? "server_error" : "invalid_request_error";
    replyError(res, e);
  });
  http.set_logger([this](const httplib::Request &req,
                         const httplib::Response &res) {
    metrics.httpResponse(pathLabel(req.path), res.status);
  });
  http.Get("/health", [this](const httplib::Request &, httplib::Response &res) {
    reply(res, draining ? 503 : 200,
          draining ? "{\"status\":\"draining\"}" : "{\"status\":\"ok\"}");
  });
  http.Get("/v1/models", [this](const httplib::Request &,
                                httplib::Response &res) {
    reply(res, 200, modelsBody(options.modelNames, int64_t(std::time(nullptr))));
  });
  http.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
    int64_t queued = 0;
    EngineStats s = engine.stats();
    {
      std::lock_guard<std::mutex> lock(inflightMu);
      queued = std::max<int64_t>(inflight - s.runningRequests, 0);
    }
    res.set_content(metrics.render(s, queued),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  installGenerationRoutes();
}

Server::Server(Engine &engine, const Artifact &artifact, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, artifact, std::move(options))) {
  Impl &im = *impl_;
  // Each streaming request holds a pool thread while it runs, so the pool
  // covers every request the server admits, plus a few for /health and
  // /metrics while it is full.
  const int64_t threads = std::min<int64_t>(
      im.engine.stats().maxSeqs + im.options.maxQueue + 8, 1024);
  im.http.new_task_queue = [threads] {
    return new httplib::ThreadPool(size_t(threads));
  };
  im.http.set_payload_max_length(size_t(im.options.maxBodyBytes));
  // A stream is one small write per token: with Nagle's algorithm (on by
  // default in cpp-httplib) each waits for the client's delayed ACK, which
  // added up to tens of milliseconds per token under load.
  im.http.set_tcp_nodelay(true);
  im.installRoutes();
}

Server::~Server() { stop(); }

Status Server::bind() {
  Impl &im = *impl_;
  if (im.options.port == 0) {
    im.boundPort = im.http.bind_to_any_port(im.options.host);
  } else if (im.http.bind_to_port(im.options.host, im.options.port)) {
    im.boundPort = im.options.port;
  }
  if (im.boundPort <= 0)
    return Status::error("cannot listen on " + im.options.host + ":" +
                         std::to_string(im.options.port) +
                         " (address in use, or not an address of this host)");
  return Status::ok();
}

int Server::port() const { return impl_->boundPort; }

void Server::start() {
  Impl &im = *impl_;
  im.thread = std::thread([p = &im] { p->http.listen_after_bind(); });
  // Returns once the loop accepts: a stop() that came before it began
  // would find nothing to stop, and the loop would then run forever.
  for (int i = 0; i < 5000 && !im.http.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int64_t Server::drain() {
  Impl &im = *impl_;
  im.draining = true;
  std::unique_lock<std::mutex> lock(im.inflightMu);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(im.options.drainTimeoutS);
  if (im.inflightChanged.wait_until(lock, deadline,
                                    [&] { return im.inflight == 0; }))
    return 0;
  return im.inflight; // the engine cancels them when it is destroyed
}

void Server::stop() {
  Impl &im = *impl_;
  im.stopping = true; // handlers waiting on tokens cancel and return
  if (im.http.is_running())
    im.http.stop();
  if (im.thread.joinable())
    im.thread.join();
}

} // namespace ingot::server
