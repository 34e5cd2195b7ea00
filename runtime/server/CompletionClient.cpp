//===- CompletionClient.cpp - Streaming completions over HTTP -------------===//
#include "CompletionClient.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

namespace ingot::server {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct CompletionClient::Impl {
  std::string url, apiKey, model;
  std::mutex mu;
  std::vector<std::thread> threads;

  httplib::Headers headers() const {
    httplib::Headers h;
    if (!apiKey.empty())
      h.emplace("Authorization", "Bearer " + apiKey);
    return h;
  }
  void run(const RequestParams &request, const TokenCallback &callback);
};

namespace {

/// Turns the SSE byte stream into token events. The chunk that carries the
/// finish reason holds a token unless usage says the choice had one fewer
/// token than chunks, so it is held back until the usage chunk arrives.
class SseReader {
public:
  SseReader(const TokenCallback &callback, Clock::time_point start)
      : callback_(callback), start_(start) {}

  void feed(const char *data, size_t n) {
    buffer_.append(data, n);
    size_t end;
    while ((end = buffer_.find("\n\n")) != std::string::npos) {
      std::string event = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      if (event.rfind("data: ", 0) == 0)
        onData(event.substr(6));
    }
  }

  /// Delivers the final event if the stream ended without one.
  void close(const std::string &error) {
    if (finished_)
      return;
    TokenEvent e;
    e.finished = true;
    e.finishReason = error.empty() && haveFinal_ ? final_.finishReason : "error";
    e.error = error.empty() && !haveFinal_ ? "the stream ended early" : error;
    e.timeMs = haveFinal_ ? final_.timeMs : elapsedMs();
    deliver(e);
  }

private:
  double elapsedMs() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - start_)
        .count();
  }

  void deliver(const TokenEvent &e) {
    finished_ = e.finished;
    callback_(e);
  }

  void onData(const std::string &payload) {
    if (payload == "[DONE]") {
      if (haveFinal_) {
        final_.token = usage_ < 0 || usage_ >= chunks_ ? 0 : -1;
        deliver(final_);
      }
      return;
    }
    json j = json::parse(payload, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return close("the server sent a chunk that is not JSON");
    if (j.contains("error"))
      return close(j["error"].value("message", std::string("server error")));
    if (j.contains("usage") && j["usage"].is_object())
      usage_ = j["usage"].value("completion_tokens", int64_t(-1));
    if (!j.contains("choices") || j["choices"].empty())
      return;
    ++chunks_;
    const json &c = j["choices"][0];
    TokenEvent e;
    e.token = 0; // the id is not on the wire; only its arrival matters
    e.text = c.value("text", std::string());
    e.timeMs = elapsedMs();
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
      e.finished = true;
      e.finishReason = c["finish_reason"].get<std::string>();
      final_ = e;
      haveFinal_ = true;
      return;
    }
    deliver(e);
  }

  const TokenCallback &callback_;
  Clock::time_point start_;
  std::string buffer_;
  TokenEvent final_;
  bool haveFinal_ = false, finished_ = false;
  int64_t chunks_ = 0, usage_ = -1;
};

} // namespace

void CompletionClient::Impl::run(const RequestParams &request,
                                 const TokenCallback &callback) {
  const Clock::time_point start = Clock::now();
  json body = {{"model", model},
               {"prompt", request.promptTokens},
               {"max_tokens", request.maxNewTokens},
               {"temperature", request.sampling.temperature},
               {"ignore_eos", request.ignoreEos},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  httplib::Client client(url);
  client.set_read_timeout(600);
  client.set_tcp_nodelay(true);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.headers = headers();
  req.set_header("Content-Type", "application/json");
  req.body = body.dump();
  SseReader reader(callback, start);
  int status = 0;
  req.response_handler = [&](const httplib::Response &r) {
    status = r.status;
    return true;
  };
  std::string errorBody;
  req.content_receiver = [&](const char *data, size_t n, uint64_t, uint64_t) {
    if (status == 200)
      reader.feed(data, n);
    else
      errorBody.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client.send(req, res, error))
    return reader.close(url + ": " + httplib::to_string(error));
  reader.close(status == 200 ? "" : "HTTP " + std::to_string(status) + ": " +
                                        errorBody);
}

CompletionClient::CompletionClient() : impl_(std::make_unique<Impl>()) {}

CompletionClient::~CompletionClient() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (std::thread &t : impl_->threads)
    t.join();
}

Status CompletionClient::connect(const std::string &url,
                                 const std::string &apiKey,
                                 std::unique_ptr<CompletionClient> *out) {
  std::unique_ptr<CompletionClient> c(new CompletionClient());
  c->impl_->url = url;
  c->impl_->apiKey = apiKey;
  httplib::Client client(url);
  if (!client.is_valid())
    return Status::error(url + ": not an http://HOST:PORT address");
  httplib::Result r = client.Get("/v1/models", c->impl_->headers());
  if (!r)
    return Status::error(url + ": " + httplib::to_string(r.error()));
  if (r->status != 200)
    return Status::error(url + "/v1/models: HTTP " +
                         std::to_string(r->status) + ": " + r->body);
  json models = json::parse(r->body, nullptr, false);
  if (models.is_discarded() || !models.contains("data") ||
      !models["data"].is_array() || models["data"].empty() ||
      !models["data"][0].contains("id"))
    return Status::error(url + "/v1/models: no model listed");
  c->impl_->model = models["data"][0]["id"].get<std::string>();
  *out = std::move(c);
  return Status::ok();
}

Status CompletionClient::submit(const RequestParams &request,
                                TokenCallback callback) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl *im = impl_.get();
  impl_->threads.emplace_back(
      [im, request, callback = std::move(callback)] { im->run(request, callback); });
  return Status::ok();
}

const std::string &CompletionClient::model() const { return impl_->model; }

std::map<std::string, double> CompletionClient::metrics() const {
  std::map<std::string, double> out;
  httplib::Client client(impl_->url);
  httplib::Result r = client.Get("/metrics", impl_->headers());
  if (!r || r->status != 200)
    return out;
  std::istringstream lines(r->body);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t space = line.find(' ');
    if (line.empty() || line[0] == '#' || space == std::string::npos ||
        line.find('{') < space)
      continue;
    out[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return out;
}

} // namespace ingot::server
