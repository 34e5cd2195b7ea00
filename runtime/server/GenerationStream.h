//===- GenerationStream.h - Engine events to one HTTP handler ---*- C++ -*-===//
//
// The engine calls back on its step thread; an HTTP handler waits on its own
// thread. A GenerationStream submits a request's choices and queues their
// events for the handler. The queue outlives the stream (the callbacks hold
// it), so an engine event for a handler that already gave up is harmless;
// destroying the stream cancels what is still running, which frees its KV
// blocks at the engine's next step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpenAiRequest.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

namespace ingot::server {

struct ChoiceEvent {
  size_t choice = 0;
  TokenEvent event;
};

class GenerationStream {
public:
  /// Submits every choice; if the engine refuses one, cancels the others
  /// and returns its error.
  static Status start(Engine &engine, const CompletionRequest &request,
                      std::unique_ptr<GenerationStream> *out);
  ~GenerationStream();

  /// The next event, waiting at most `timeout`; false if none came.
  bool next(ChoiceEvent *out, std::chrono::milliseconds timeout);
  /// Every choice has delivered its final event and it was taken.
  bool done() const;
  void cancel();

private:
  struct Queue {
    std::mutex mu;
    std::condition_variable ready;
    std::deque<ChoiceEvent> events;
  };
  explicit GenerationStream(Engine &engine);

  Engine &engine_;
  std::shared_ptr<Queue> queue_;
  std::vector<uint64_t> ids_;
  size_t open_ = 0; // choices whose final event was not taken yet
};

} // namespace ingot::server
