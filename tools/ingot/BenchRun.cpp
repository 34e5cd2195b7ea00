//===- BenchRun.cpp - Feeding the Engine and timing every token -----------===//
//
// Token times come from the engine's own TokenEvent::timeMs (ms since the
// request was submitted, taken on the step thread as each token is
// delivered), so they do not include this thread's wake-up latency.
// Duration runs from just before the first submit to the moment the last
// request has finished, as vLLM measures it.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace ingot::cli::bench {
namespace {

using Clock = std::chrono::steady_clock;

/// "label [=========>          ] 12/16" on stderr, redrawn in place.
class ProgressBar {
public:
  ProgressBar(std::string label, int64_t total)
      : label_(std::move(label)), total_(total) {
    draw(0);
  }
  void draw(int64_t done) {
    if (label_.empty())
      return;
    constexpr int kWidth = 30;
    int filled = total_ ? int(kWidth * done / total_) : kWidth;
    std::string bar(size_t(filled), '=');
    if (filled < kWidth)
      bar += '>' + std::string(size_t(kWidth - filled - 1), ' ');
    std::fprintf(stderr, "\r%s [%s] %lld/%lld", label_.c_str(), bar.c_str(),
                 (long long)done, (long long)total_);
    if (done == total_)
      std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

private:
  std::string label_;
  int64_t total_;
};

double uniform01(uint64_t *state) { // splitmix64 → [0, 1)
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return double((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

RequestParams paramsFor(const BenchRequest &r) {
  RequestParams p;
  p.promptTokens = r.prompt;
  p.maxNewTokens = r.outputLen;
  p.ignoreEos = r.ignoreEos;
  p.sampling.temperature = 0; // greedy: sampling cost is not what we time
  return p;
}

} // namespace

SubmitFn engineSubmitter(Engine &engine) {
  return [&engine](const RequestParams &p, TokenCallback cb) {
    return engine.submit(p, std::move(cb), nullptr);
  };
}

Status runServing(const SubmitFn &submit,
                  const std::vector<BenchRequest> &requests, double rate,
                  int64_t maxConcurrency, uint64_t seed,
                  const std::string &label, ServingRun *run) {
  run->maxConcurrency = maxConcurrency;
  run->timings.assign(requests.size(), RequestTiming());
  std::mutex mu;
  std::condition_variable changed;
  int64_t inFlight = 0, done = 0;
  ProgressBar bar(label, int64_t(requests.size()));
  uint64_t rng = seed ^ 0x5bd1e995ull;
  auto start = Clock::now();
  double nextArrivalS = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (rate > 0 && i > 0) {
      // Poisson arrivals: the first at once, then exponential gaps with
      // mean 1 / rate (as vLLM's benchmark sends them).
      nextArrivalS += -std::log(1.0 - uniform01(&rng)) / rate;
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(nextArrivalS)));
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      if (maxConcurrency > 0)
        changed.wait(lock, [&] { return inFlight < maxConcurrency; });
      ++inFlight;
    }
    RequestTiming *t = &run->timings[i];
    t->inputTokens = int64_t(requests[i].prompt.size());
    auto onToken = [&, t](const TokenEvent &e) {
      std::lock_guard<std::mutex> lock(mu);
      if (e.token >= 0)
        t->tokenTimesMs.push_back(e.timeMs);
      if (!e.finished)
        return;
      t->e2eMs = e.timeMs;
      t->ok = e.finishReason == "length" || e.finishReason == "stop";
      if (!t->ok && run->firstError.empty())
        run->firstError = e.error.empty() ? e.finishReason : e.error;
      --inFlight;
      bar.draw(++done);
      changed.notify_all();
    };
    if (Status s = submit(paramsFor(requests[i]), onToken); !s) {
      std::lock_guard<std::mutex> lock(mu);
      --inFlight;
      bar.draw(++done);
      if (run->firstError.empty())
        run->firstError = s.message();
    }
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return done == int64_t(requests.size()); });
  }
  run->durationS = std::chrono::duration<double>(Clock::now() - start).count();
  return Status::ok();
}

namespace {

/// Runs one request alone and returns its token times.
Status runAlone(Engine &engine, std::vector<int32_t> prompt, int64_t outputLen,
                std::vector<double> *tokenTimesMs) {
  ServingRun run;
  BenchRequest r;
  r.prompt = std::move(prompt);
  r.outputLen = outputLen;
  if (Status s = runServing(engineSubmitter(engine), {r}, 0, 0, 0, "", &run);
      !s)
    return s;
  const RequestTiming &t = run.timings[0];
  if (!t.ok || int64_t(t.tokenTimesMs.size()) != outputLen)
    return Status::error("the benchmark request did not complete: " +
                         (run.firstError.empty() ? std::string("too few tokens")
                                                 : run.firstError));
  *tokenTimesMs = t.tokenTimesMs;
  return Status::ok();
}

} // namespace

Status runPrefillMode(Engine &engine, int64_t tokens, int64_t reps,
                      int64_t vocab, uint64_t seed, ModeResult *out) {
  out->nTokens = tokens;
  uint64_t rng = seed ^ 0x9b1ull;
  // A fresh random prompt each time, so no repetition hits the prefix cache.
  for (int64_t i = 0; i <= reps; ++i) {
    std::vector<double> times;
    if (Status s =
            runAlone(engine, randomTokens(tokens, vocab, &rng), 1, &times);
        !s)
      return s;
    if (i > 0) // the first run only warms up
      out->tokensPerS.push_back(double(tokens) / (times[0] / 1000.0));
  }
  out->stats = meanStd(out->tokensPerS);
  return Status::ok();
}

Status runDecodeMode(Engine &engine, int64_t tokens, int64_t reps,
                     int64_t vocab, uint64_t seed, ModeResult *out) {
  out->nTokens = tokens;
  uint64_t rng = seed ^ 0x7c3ull;
  for (int64_t i = 0; i <= reps; ++i) {
    std::vector<double> times;
    if (Status s =
            runAlone(engine, randomTokens(1, vocab, &rng), tokens, &times);
        !s)
      return s;
    double spanS = (times.back() - times.front()) / 1000.0;
    if (i > 0)
      out->tokensPerS.push_back(spanS > 0 ? double(tokens - 1) / spanS : 0);
  }
  out->stats = meanStd(out->tokensPerS);
  return Status::ok();
}

} // namespace ingot::cli::bench
