//===- EngineBinding.cpp - ingot._Engine: the serving engine in Python ----===//
//
// generate() submits every prompt at once to the continuous-batching engine
// and waits with the GIL released; stream() hands out a TokenStream whose
// next() waits (GIL released) for the next token event. Options and
// sampling parameters arrive as dicts built by the Python layer, so the
// field names and defaults live in one place (ingot/__init__.py).
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "ingot/Engine.h"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace ingot::python {
namespace {

template <typename T>
T get(const py::dict &d, const char *key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

RequestParams requestFrom(const py::object &prompt, const py::dict &p) {
  RequestParams r;
  if (py::isinstance<py::str>(prompt))
    r.prompt = prompt.cast<std::string>();
  else
    r.promptTokens = prompt.cast<std::vector<int32_t>>();
  SamplingParams &s = r.sampling;
  s.temperature = get<double>(p, "temperature", 1.0);
  s.topK = get<int64_t>(p, "top_k", 0);
  s.topP = get<double>(p, "top_p", 1.0);
  s.minP = get<double>(p, "min_p", 0.0);
  s.repetitionPenalty = get<double>(p, "repetition_penalty", 1.0);
  s.presencePenalty = get<double>(p, "presence_penalty", 0.0);
  s.frequencyPenalty = get<double>(p, "frequency_penalty", 0.0);
  s.seed = uint64_t(get<int64_t>(p, "seed", 0));
  r.maxNewTokens = get<int64_t>(p, "max_tokens", 16);
  r.stopStrings = get<std::vector<std::string>>(p, "stop", {});
  r.stopTokenIds = get<std::vector<int32_t>>(p, "stop_token_ids", {});
  r.ignoreEos = get<bool>(p, "ignore_eos", false);
  r.logprobs = get<int32_t>(p, "logprobs", -1);
  return r;
}

/// Token events of one request, queued for a Python thread.
struct EventQueue {
  std::mutex mu;
  std::condition_variable ready;
  std::deque<TokenEvent> events;
  void push(const TokenEvent &e) {
    {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(e);
    }
    ready.notify_all();
  }
  TokenEvent pop() {
    std::unique_lock<std::mutex> lock(mu);
    ready.wait(lock, [&] { return !events.empty(); });
    TokenEvent e = std::move(events.front());
    events.pop_front();
    return e;
  }
};

py::dict eventDict(const TokenEvent &e) {
  py::dict d;
  d["token_id"] = e.token;
  d["text"] = py::bytes(e.text).attr("decode")("utf-8", "replace");
  d["finished"] = e.finished;
  d["finish_reason"] = e.finished ? py::object(py::str(e.finishReason))
                                  : py::object(py::none());
  d["time_ms"] = e.timeMs;
  if (e.hasLogprob) {
    d["logprob"] = e.logprob;
    py::dict top;
    for (const TokenLogprob &t : e.topLogprobs)
      top[py::int_(t.token)] = t.logprob;
    d["top_logprobs"] = top;
  }
  return d;
}

class PyEngine;

/// Iterator over one streamed request; cancels it if dropped early.
class TokenStream {
public:
  TokenStream(Engine &engine, std::shared_ptr<EventQueue> q, uint64_t id)
      : engine_(engine), queue_(std::move(q)), id_(id) {}
  ~TokenStream() {
    if (!done_)
      engine_.cancel(id_);
  }
  py::dict next() {
    if (done_)
      throw py::stop_iteration();
    TokenEvent e;
    {
      py::gil_scoped_release release;
      e = queue_->pop();
    }
    done_ = e.finished;
    if (e.finishReason == "error")
      throw std::runtime_error(e.error);
    return eventDict(e);
  }

private:
  Engine &engine_;
  std::shared_ptr<EventQueue> queue_;
  uint64_t id_;
  bool done_ = false;
};

class PyEngine {
public:
  PyEngine(const std::string &path, const py::dict &options) {
    checkStatus(Artifact::open(path, &artifact_,
                               {get<std::string>(options, "weights", "")}));
    EngineOptions o;
    o.threads = get<unsigned>(options, "threads", 0);
    o.kvBlocks = get<int64_t>(options, "kv_blocks", 0);
    o.kvCacheMb = get<int64_t>(options, "kv_cache_mb", 0);
    o.maxTokensPerStep = get<int64_t>(options, "max_tokens_per_step", 0);
    o.maxSeqs = get<int64_t>(options, "max_seqs", 0);
    o.prefixCaching = get<bool>(options, "prefix_caching", true);
    o.kvCacheDtype = get<std::string>(options, "kv_cache_dtype", "auto");
    checkStatus(Engine::create(*artifact_, o, &engine_),
                path + ": ");
  }
  ~PyEngine() {
    py::gil_scoped_release release; // the step thread may be in a callback
    engine_.reset();
  }

  /// One list of event dicts per prompt, in order; the last is final.
  py::list generate(const py::list &prompts, const py::list &params) {
    std::vector<RequestParams> requests;
    for (size_t i = 0; i < prompts.size(); ++i)
      requests.push_back(requestFrom(prompts[i], params[i].cast<py::dict>()));
    std::vector<std::shared_ptr<EventQueue>> queues;
    std::vector<uint64_t> ids;
    for (const RequestParams &r : requests) {
      auto q = std::make_shared<EventQueue>();
      uint64_t id = 0;
      Status s = engine_->submit(r, [q](const TokenEvent &e) { q->push(e); }, &id);
      if (!s) {
        for (uint64_t earlier : ids)
          engine_->cancel(earlier);
        throw std::invalid_argument(s.message());
      }
      queues.push_back(q);
      ids.push_back(id);
    }
    std::vector<std::vector<TokenEvent>> all(requests.size());
    {
      py::gil_scoped_release release;
      for (size_t i = 0; i < queues.size(); ++i)
        for (bool finished = false; !finished;) {
          all[i].push_back(queues[i]->pop());
          finished = all[i].back().finished;
        }
    }
    py::list out;
    for (const auto &events : all) {
      py::list l;
      for (const TokenEvent &e : events)
        l.append(eventDict(e));
      out.append(l);
    }
    return out;
  }

  std::unique_ptr<TokenStream> stream(const py::object &prompt,
                                      const py::dict &params) {
    RequestParams r = requestFrom(prompt, params);
    auto q = std::make_shared<EventQueue>();
    uint64_t id = 0;
    Status s = engine_->submit(r, [q](const TokenEvent &e) { q->push(e); }, &id);
    if (!s)
      throw std::invalid_argument(s.message());
    return std::make_unique<TokenStream>(*engine_, q, id);
  }

  std::vector<int32_t> encode(const std::string &text, bool addBos) const {
    return engine_->tokenizer().encode(text, addBos &&
                                                 engine_->tokenizer().addBos());
  }
  py::object decode(const std::vector<int32_t> &ids) const {
    return py::bytes(engine_->tokenizer().decode(ids))
        .attr("decode")("utf-8", "replace");
  }
  std::string chatPrompt(const std::vector<std::pair<std::string, std::string>>
                             &messages) const {
    std::vector<ChatMessage> m;
    for (const auto &[role, content] : messages)
      m.push_back({role, content});
    std::string text;
    checkStatus(engine_->tokenizer().applyChatTemplate(m, true, &text));
    return text;
  }
  py::dict stats() const {
    EngineStats s = engine_->stats();
    py::dict d;
    d["steps"] = s.steps;
    d["prompt_tokens"] = s.promptTokens;
    d["generated_tokens"] = s.generatedTokens;
    d["preemptions"] = s.preemptions;
    d["prefix_cache_hit_rate"] = s.prefixCacheHitRate;
    d["kv_blocks_total"] = s.kvBlocksTotal;
    d["kv_blocks_used"] = s.kvBlocksUsed;
    return d;
  }
  int64_t contextLength() const { return engine_->contextLength(); }

private:
  std::unique_ptr<Artifact> artifact_;
  std::unique_ptr<Engine> engine_;
};

} // namespace

void bindEngine(py::module_ &m) {
  py::class_<TokenStream>(m, "_TokenStream")
      .def("__iter__", [](TokenStream &s) -> TokenStream & { return s; })
      .def("__next__", &TokenStream::next);
  py::class_<PyEngine>(m, "_Engine")
      .def(py::init<const std::string &, const py::dict &>())
      .def("generate", &PyEngine::generate)
      .def("stream", &PyEngine::stream, py::keep_alive<0, 1>())
      .def("encode", &PyEngine::encode)
      .def("decode", &PyEngine::decode)
      .def("chat_prompt", &PyEngine::chatPrompt)
      .def("stats", &PyEngine::stats)
      .def_property_readonly("context_length", &PyEngine::contextLength);
}

} // namespace ingot::python
