//===- GenerationStream.cpp - Engine events to one HTTP handler -----------===//
#include "GenerationStream.h"

namespace ingot::server {

GenerationStream::GenerationStream(Engine &engine)
    : engine_(engine), queue_(std::make_shared<Queue>()) {}

GenerationStream::~GenerationStream() {
  if (open_)
    cancel();
}

Status GenerationStream::start(Engine &engine, const CompletionRequest &request,
                               std::unique_ptr<GenerationStream> *out) {
  std::unique_ptr<GenerationStream> s(new GenerationStream(engine));
  for (size_t i = 0; i < request.choices.size(); ++i) {
    std::shared_ptr<Queue> q = s->queue_;
    auto onEvent = [q, i](const TokenEvent &e) {
      {
        std::lock_guard<std::mutex> lock(q->mu);
        q->events.push_back({i, e});
      }
      q->ready.notify_one();
    };
    uint64_t id = 0;
    if (Status st = engine.submit(request.choices[i], onEvent, &id); !st)
      return st; // ~GenerationStream cancels the choices already submitted
    s->ids_.push_back(id);
    ++s->open_;
  }
  *out = std::move(s);
  return Status::ok();
}

bool GenerationStream::next(ChoiceEvent *out,
                            std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(queue_->mu);
  if (!queue_->ready.wait_for(lock, timeout,
                              [&] { return !queue_->events.empty(); }))
    return false;
  *out = std::move(queue_->events.front());
  queue_->events.pop_front();
  if (out->event.finished && open_)
    --open_;
  return true;
}

bool GenerationStream::done() const { return open_ == 0; }

void GenerationStream::cancel() {
  for (uint64_t id : ids_)
    engine_.cancel(id); // a finished id is ignored by the engine
}

} // namespace ingot::server
