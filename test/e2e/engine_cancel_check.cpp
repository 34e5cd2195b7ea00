//===- engine_cancel_check.cpp - Cancellation frees a request's blocks ----===//
//
// Driven by test_engine_cancel.py on a tiny compiled model: four requests
// run together; two are cancelled from their first token's callback. The
// cancelled ones must end "cancelled" early, the others run to their length,
// and once the engine is idle no KV block may still be held. A fifth
// request's callback throws at its third token: that request alone must end
// (counted as failed, its blocks freed) and the engine must go on.
//
//===----------------------------------------------------------------------===//
#include "ingot/Artifact.h"
#include "ingot/Engine.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: engine-cancel-check ART.ingot\n");
    return 2;
  }
  std::unique_ptr<ingot::Artifact> artifact;
  if (ingot::Status s = ingot::Artifact::open(argv[1], &artifact); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  ingot::EngineOptions options;
  options.kvBlocks = 64;
  std::unique_ptr<ingot::Engine> engine;
  if (ingot::Status s = ingot::Engine::create(*artifact, options, &engine); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  constexpr int kRequests = 4, kNewTokens = 40;
  std::mutex mu;
  std::vector<uint64_t> ids(kRequests);
  std::vector<std::string> reasons(kRequests);
  std::vector<int> tokens(kRequests, 0);
  std::vector<int64_t> heldWhileRunning(kRequests, 0);
  for (int i = 0; i < kRequests; ++i) {
    ingot::RequestParams r;
    r.promptTokens = {5, 17, 42, 9, int32_t(10 + i), 31, 8};
    r.maxNewTokens = kNewTokens;
    r.ignoreEos = true;
    ingot::Engine *e = engine.get();
    auto cb = [&, i, e](const ingot::TokenEvent &ev) {
      std::lock_guard<std::mutex> lock(mu);
      if (ev.token >= 0 && !ev.finished)
        ++tokens[i];
      if (ev.finished) {
        reasons[i] = ev.finishReason;
        if (ev.token >= 0)
          ++tokens[i];
      } else if (i % 2 == 0 && tokens[i] == 1) {
        heldWhileRunning[i] = e->stats().kvBlocksUsed;
        e->cancel(ids[i]);
      }
    };
    std::lock_guard<std::mutex> lock(mu);
    if (ingot::Status s = engine->submit(r, cb, &ids[i]); !s) {
      std::fprintf(stderr, "error: submit: %s\n", s.message().c_str());
      return 1;
    }
  }
  int throwerEvents = 0;
  {
    ingot::RequestParams r;
    r.promptTokens = {5, 17, 42, 9, 3, 31, 8};
    r.maxNewTokens = kNewTokens;
    r.ignoreEos = true;
    uint64_t id = 0;
    auto thrower = [&](const ingot::TokenEvent &) {
      if (++throwerEvents == 3)
        throw std::runtime_error("consumer went away");
    };
    if (ingot::Status s = engine->submit(r, thrower, &id); !s) {
      std::fprintf(stderr, "error: submit: %s\n", s.message().c_str());
      return 1;
    }
  }
  engine->waitIdle();
  int failures = 0;
  for (int i = 0; i < kRequests; ++i) {
    bool cancelled = i % 2 == 0;
    std::printf("request %d: %s after %d tokens\n", i, reasons[i].c_str(),
                tokens[i]);
    if (cancelled && (reasons[i] != "cancelled" || tokens[i] >= kNewTokens))
      ++failures;
    if (!cancelled && (reasons[i] != "length" || tokens[i] != kNewTokens))
      ++failures;
  }
  ingot::EngineStats stats = engine->stats();
  std::printf("blocks held when idle: %lld (peak %lld of %lld)\n",
              (long long)stats.kvBlocksUsed, (long long)stats.peakKvBlocksUsed,
              (long long)stats.kvBlocksTotal);
  if (stats.kvBlocksUsed != 0 || stats.peakKvBlocksUsed <= 0)
    ++failures;
  std::printf("throwing callback: %d events, %lld failed requests\n",
              throwerEvents, (long long)stats.failedRequests);
  if (throwerEvents != 3 || stats.failedRequests != 1)
    ++failures;
  std::printf(failures ? "FAILED\n" : "OK\n");
  return failures ? 1 : 0;
}
