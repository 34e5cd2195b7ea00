//===- Generator.cpp - Text generation for one sequence -------------------===//
#include "ingot/Generator.h"

#include "ingot/Profiler.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ingot {
namespace {

template <typename T>
NamedTensor makeTensor(const char *name, DType dtype,
                       std::vector<int64_t> shape,
                       const std::vector<T> &values) {
  NamedTensor t;
  t.name = name;
  t.tensor.dtype = dtype;
  t.tensor.shape = std::move(shape);
  t.tensor.data.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(t.tensor.data.data(), values.data(), t.tensor.data.size());
  return t;
}

/// Length of the UTF-8 sequence a lead byte starts; 0 if not a lead byte.
size_t utf8Length(unsigned char c) {
  if (c < 0x80)
    return 1;
  if ((c & 0xe0) == 0xc0 && c >= 0xc2)
    return 2;
  if ((c & 0xf0) == 0xe0)
    return 3;
  if ((c & 0xf8) == 0xf0 && c <= 0xf4)
    return 4;
  return 0;
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t)
      .count();
}

} // namespace

std::string takeCompleteUtf8(std::string &bytes, bool final) {
  static const char kReplacement[] = "\xef\xbf\xbd";
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    size_t len = utf8Length(static_cast<unsigned char>(bytes[i]));
    if (len && i + len > bytes.size()) {
      bool prefixOk = true;
      for (size_t k = i + 1; k < bytes.size(); ++k)
        prefixOk &= (static_cast<unsigned char>(bytes[k]) & 0xc0) == 0x80;
      if (prefixOk && !final)
        break; // wait for the rest of this character
      len = 0;
    }
    bool valid = len > 0;
    for (size_t k = 1; valid && k < len; ++k)
      valid = (static_cast<unsigned char>(bytes[i + k]) & 0xc0) == 0x80;
    if (valid) {
      out.append(bytes, i, len);
      i += len;
    } else {
      out += kReplacement;
      i += 1;
    }
  }
  bytes.erase(0, i);
  return out;
}

void StepBatch::addSequence(const int32_t *ids, int64_t count,
                            int64_t firstPosition,
                            const std::vector<int32_t> &blocks,
                            int64_t blockSize) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t pos = firstPosition + i;
    tokens.push_back(ids[i]);
    positions.push_back(pos);
    slots.push_back(int64_t(blocks[pos / blockSize]) * blockSize +
                    pos % blockSize);
  }
  int64_t width = std::max<int64_t>(blocksPerSeq, blocks.size());
  if (width != blocksPerSeq) { // widen earlier rows, padding with -1
    std::vector<int32_t> wider;
    for (size_t r = 0; r < queryEnds.size(); ++r) {
      wider.insert(wider.end(), blockTables.begin() + r * blocksPerSeq,
                   blockTables.begin() + (r + 1) * blocksPerSeq);
      wider.resize((r + 1) * width, -1);
    }
    blockTables = std::move(wider);
    blocksPerSeq = width;
  }
  blockTables.insert(blockTables.end(), blocks.begin(), blocks.end());
  blockTables.resize((queryEnds.size() + 1) * blocksPerSeq, -1);
  queryEnds.push_back(static_cast<int64_t>(tokens.size()));
  logitsIndices.push_back(static_cast<int64_t>(tokens.size()) - 1);
}

std::vector<NamedTensor> StepBatch::toTensors() const {
  int64_t n = static_cast<int64_t>(tokens.size());
  int64_t seqs = static_cast<int64_t>(queryEnds.size());
  std::vector<NamedTensor> t;
  t.push_back(makeTensor("tokens", DType::I64, {n}, tokens));
  t.push_back(makeTensor("positions", DType::I64, {n}, positions));
  t.push_back(makeTensor("slot_mapping", DType::I64, {n}, slots));
  t.push_back(makeTensor("block_tables", DType::I32, {seqs, blocksPerSeq},
                         blockTables));
  t.push_back(makeTensor("query_ends", DType::I64, {seqs}, queryEnds));
  t.push_back(makeTensor("logits_indices", DType::I64, {seqs}, logitsIndices));
  return t;
}

Generator::Generator(const Artifact &artifact, unsigned threads)
    : artifact_(artifact), config_(artifact.manifest().llm), pool_(threads),
      executor_(artifact, pool_) {}

Generator::~Generator() = default;

void Generator::setProfiler(StepProfiler *profiler) {
  profiler_ = profiler;
  executor_.setProfiler(profiler);
  if (gpu_)
    gpu_->setProfiler(profiler);
}

Status Generator::create(const Artifact &artifact, unsigned threads,
                         int64_t kvBlocks, std::unique_ptr<Generator> *out,
                         const std::string &kvCacheDtype) {
  const Manifest &m = artifact.manifest();
  if (!m.hasLlm)
    return Status::error(artifact.path() +
                         ": not an LLM artifact (compiled from an ONNX graph); "
                         "use `ingot run` instead");
  std::unique_ptr<Generator> g(new Generator(artifact, threads));
  if (!g->pool_.status())
    return g->pool_.status();
  if (!parseKvCacheDtype(kvCacheDtype, g->config_.kvDtype, &g->config_.kvDtype))
    return Status::error("KV-cache dtype '" + kvCacheDtype +
                         "' is not one of auto, float32, bfloat16, int8, fp8");
  if (kvBlocks <= 0)
    kvBlocks = g->config_.maxBlocksPerSeq;
  if (Status s = g->kv_.allocate(g->config_, kvBlocks); !s)
    return s;
  g->blocks_ = std::make_unique<KvBlockAllocator>(kvBlocks);
  g->executor_.setKvCache(&g->kv_.view());
  if (Status s = Tokenizer::create(m.tokenizer, &g->tokenizer_); !s)
    return Status::error(artifact.path() + ": tokenizer: " + s.message());
  g->eosIds_ = m.generation.eosIds;
  if (g->eosIds_.empty() && m.tokenizer.eosId >= 0)
    g->eosIds_.push_back(m.tokenizer.eosId);
  *out = std::move(g);
  return Status::ok();
}

Status Generator::useDevice(const std::string &device, std::string *note) {
  DeviceRequest req;
  if (Status s = parseDeviceRequest(device, &req); !s)
    return s;
  if (Status s = openGpuExecutor(artifact_, req, &gpu_, note); !s)
    return s;
  if (!gpu_)
    return Status::ok();
  // The same number of blocks as the CPU cache, now on the device. The
  // host arrays stay reserved but are never written, so their pages are
  // never committed (KvCacheStorage::allocate without prefault).
  if (Status s = gpu_->allocateKvCache(blocks_->numBlocks(), config_.kvDtype);
      !s) {
    gpu_.reset();
    return s;
  }
  gpu_->setProfiler(profiler_);
  return Status::ok();
}

Status Generator::runStep(const std::vector<int32_t> &sequence, int64_t first,
                          int64_t count, std::vector<float> *logits) {
  int64_t bs = config_.blockSize;
  while (static_cast<int64_t>(sequenceBlocks_.size()) * bs < first + count) {
    int64_t block = blocks_->allocate();
    if (block < 0)
      return Status::error(
          "KV cache exhausted: " + std::to_string(blocks_->numBlocks()) +
          " blocks hold " + std::to_string(blocks_->numBlocks() * bs) +
          " tokens; raise --kv-blocks");
    sequenceBlocks_.push_back(static_cast<int32_t>(block));
  }
  StepBatch batch;
  batch.addSequence(sequence.data() + first, count, first, sequenceBlocks_, bs);
  if (profiler_)
    profiler_->setNextRunLabel(
        (first + count <= promptLength_ ? "prefill " : "decode ") +
            std::to_string(count),
        count);
  std::vector<NamedTensor> outputs;
  if (Status s = gpu_ ? gpu_->run(batch.toTensors(), &outputs)
                      : executor_.run(batch.toTensors(), &outputs);
      !s)
    return s;
  // The validator guarantees output 0 is f32 [rows, vocab]; a plan that
  // still produced no row must not be read past its end.
  const HostTensor *out = outputs.empty() ? nullptr : &outputs[0].tensor;
  if (!out || out->dtype != DType::F32 || out->shape.size() != 2 ||
      out->shape[0] < 1 || out->shape[1] != config_.vocabSize)
    return Status::error(
        artifact_.path() +
        ": the step did not produce float32 logits of [rows, " +
        std::to_string(config_.vocabSize) + "]");
  logits->resize(out->data.size() / sizeof(float));
  std::memcpy(logits->data(), out->data.data(), out->data.size());
  return Status::ok();
}

Status Generator::generate(const std::vector<int32_t> &prompt,
                           const GenerateOptions &options,
                           GenerateResult *result) {
  *result = GenerateResult();
  int64_t vocab = config_.vocabSize;
  if (prompt.empty())
    return Status::error("the prompt is empty");
  for (int32_t id : prompt)
    if (id < 0 || id >= vocab)
      return Status::error("prompt token " + std::to_string(id) +
                           " is outside the vocabulary [0, " +
                           std::to_string(vocab) + ")");
  int64_t context = std::min(config_.maxPositions,
                             config_.maxBlocksPerSeq * config_.blockSize);
  if (static_cast<int64_t>(prompt.size()) >= context)
    return Status::error("the prompt has " + std::to_string(prompt.size()) +
                         " tokens; the compiled context holds " +
                         std::to_string(context));
  for (int32_t b : sequenceBlocks_)
    blocks_->release(b);
  sequenceBlocks_.clear();
  promptLength_ = int64_t(prompt.size());

  auto start = std::chrono::steady_clock::now();
  std::vector<int32_t> sequence = prompt;
  std::vector<float> logits;
  int64_t chunk = std::max<int64_t>(1, config_.maxTokensPerStep);
  for (int64_t first = 0; first < static_cast<int64_t>(prompt.size());
       first += chunk) {
    int64_t count = std::min<int64_t>(chunk, prompt.size() - first);
    if (Status s = runStep(sequence, first, count, &logits); !s)
      return s;
  }
  result->promptLogits = logits;

  Sampler sampler(options.sampling);
  std::string pending;
  double firstTokenMs = 0;
  result->finishReason = "length";
  for (int64_t n = 0; n < options.maxNewTokens; ++n) {
    int32_t next = sampler.sample(logits.data(), vocab, prompt, result->tokens);
    if (n == 0)
      firstTokenMs = result->ttftMs = msSince(start);
    if (std::find(eosIds_.begin(), eosIds_.end(), next) != eosIds_.end()) {
      // Like vLLM, the stop token is in the ids but not in the text.
      result->tokens.push_back(next);
      result->finishReason = "stop";
      break;
    }
    result->tokens.push_back(next);
    sequence.push_back(next);
    pending += tokenizer_->tokenBytes(next);
    std::string text = takeCompleteUtf8(pending, false);
    result->text += text;
    if (options.onToken)
      options.onToken(next, text);
    if (static_cast<int64_t>(sequence.size()) >= context ||
        n + 1 == options.maxNewTokens)
      break;
    if (Status s = runStep(sequence, sequence.size() - 1, 1, &logits); !s)
      return s;
  }
  std::string tail = takeCompleteUtf8(pending, true);
  result->text += tail;
  if (!tail.empty() && options.onToken)
    options.onToken(-1, tail);
  size_t produced = result->tokens.size();
  if (produced > 1)
    result->tpotMs = (msSince(start) - firstTokenMs) / double(produced - 1);
  return Status::ok();
}

} // namespace ingot
