//===- ServerImpl.h - State shared by the server's handlers -----*- C++ -*-===//
#pragma once

#include "OpenAiRequest.h"
#include "Server.h"
#include "ServerMetrics.h"

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ingot::server {

struct Server::Impl {
  Impl(Engine &engine, const Artifact &artifact, ServerOptions options);

  /// Routes, auth and accounting; ServerRoutes.cpp adds the generation ones.
  void installRoutes();
  void installGenerationRoutes();
  /// 401 unless the request carries the API key (when one is set).
  bool authorised(const httplib::Request &req, httplib::Response &res);
  /// Counts `n` engine requests in flight, or fills a 503 and returns false.
  bool admit(size_t n, httplib::Response &res);
  void release(size_t n);
  void reply(httplib::Response &res, int status, const std::string &body);
  void replyError(httplib::Response &res, const ApiError &error);
  void handleGeneration(const httplib::Request &req, httplib::Response &res,
                        bool chat);

  Engine &engine;
  ServerOptions options;
  ModelInfo model;
  ServerMetrics metrics;
  httplib::Server http;
  std::thread thread;
  int boundPort = -1;

  std::atomic<bool> draining{false};
  std::atomic<bool> stopping{false};
  std::mutex inflightMu;
  std::condition_variable inflightChanged;
  int64_t inflight = 0; // engine requests (choices) submitted, not finished
  std::atomic<uint64_t> nextResponseId{1};
};

} // namespace ingot::server
