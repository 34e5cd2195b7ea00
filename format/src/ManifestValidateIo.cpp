//===- ManifestValidateIo.cpp - Model I/O and an LLM's entry points -------===//
//
// The executor binds a caller's tensor to an input's buffer after checking
// it against the input's declared dtype, and kernels then read it as the
// buffer's dtype: the two must agree. The engine and the generator feed an
// LLM plan six fixed inputs and read output 0 as float32 logits, one row of
// vocab_size per sequence; a plan that disagrees is refused here rather
// than read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "ManifestValidate.h"

#include "ArtifactFormatUtil.h"

#include <set>

namespace ingot::format {
namespace {

/// What the engine feeds every step (StepBatch::toTensors).
struct EngineInput {
  const char *name;
  DType dtype;
  size_t rank;
};
constexpr EngineInput kEngineInputs[] = {
    {"tokens", DType::I64, 1},       {"positions", DType::I64, 1},
    {"slot_mapping", DType::I64, 1}, {"block_tables", DType::I32, 2},
    {"query_ends", DType::I64, 1},   {"logits_indices", DType::I64, 1},
};

std::string engineInputList() {
  std::string r;
  for (const EngineInput &e : kEngineInputs)
    r.append(r.empty() ? "" : ", ").append(e.name);
  return r;
}

Status checkEngineInputs(const Manifest &m) {
  for (const IoSpec &io : m.inputs) {
    const EngineInput *want = nullptr;
    for (const EngineInput &e : kEngineInputs)
      if (io.name == e.name)
        want = &e;
    if (!want)
      return fail("LLM input " + quoted(io.name) +
                  " is not one the engine feeds (" + engineInputList() + ")");
    if (io.dtype != want->dtype || io.dims.size() != want->rank)
      return fail(
          "LLM input " + quoted(io.name) + " is " + dtypeName(io.dtype) +
          " of rank " + std::to_string(io.dims.size()) + "; the engine feeds " +
          dtypeName(want->dtype) + " of rank " + std::to_string(want->rank));
  }
  for (const EngineInput &e : kEngineInputs) {
    bool found = false;
    for (const IoSpec &io : m.inputs)
      found |= io.name == e.name;
    if (!found)
      return fail(std::string("LLM plan has no input '") + e.name +
                  "' (the engine feeds " + engineInputList() + ")");
  }
  return Status::ok();
}

/// Output 0: float32 [rows, vocab_size], vocab_size a fixed dim (the
/// executor checks the computed shape against it).
Status checkLogits(const Manifest &m) {
  if (m.outputs.empty())
    return fail("LLM plan has no outputs; the engine reads the logits from "
                "output 0");
  const IoSpec &io = m.outputs[0];
  const int64_t vocab = m.llm.vocabSize;
  if (io.dtype != DType::F32 || io.dims.size() != 2 ||
      !io.dims[1].symbol.empty() || io.dims[1].size != vocab)
    return fail("LLM output 0 " + quoted(io.name) + " (the logits) is " +
                dtypeName(io.dtype) + " of rank " +
                std::to_string(io.dims.size()) +
                "; the engine reads float32 [rows, " + std::to_string(vocab) +
                "] (vocab_size " + std::to_string(vocab) + " a fixed dim)");
  return Status::ok();
}

const Attr *findAttr(const Step &s, const char *name) {
  for (const Attr &a : s.attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

/// paged-attention steps index the KV cache the engine allocates from the
/// LLM config: their layer and KV geometry must be the config's.
Status checkAttentionSteps(const Manifest &m) {
  const LlmConfig &l = m.llm;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    if (s.kernel != "paged_attention" && s.kernel != "rope_paged_attention")
      continue;
    const Attr *layer = findAttr(s, "layer");
    const Attr *kvHeads = findAttr(s, "num_kv_heads");
    const Attr *headDim = findAttr(s, "head_dim");
    auto intIs = [](const Attr *a, int64_t lo, int64_t hi) {
      return a && a->kind == Attr::Kind::Int && a->i >= lo && a->i <= hi;
    };
    if (!intIs(layer, 0, l.numLayers - 1) ||
        !intIs(kvHeads, l.numKvHeads, l.numKvHeads) ||
        !intIs(headDim, l.headDim, l.headDim))
      return fail(describeStep(m, i) +
                  ": layer, num_kv_heads and head_dim must be Int attributes "
                  "within the KV cache of the LLM config (layer 0 to " +
                  std::to_string(l.numLayers - 1) + ", " +
                  std::to_string(l.numKvHeads) + " KV heads of dim " +
                  std::to_string(l.headDim) + ")");
  }
  return Status::ok();
}

} // namespace

Status validateIo(const Manifest &m) {
  for (int out = 0; out < 2; ++out) {
    const std::vector<IoSpec> &specs = out ? m.outputs : m.inputs;
    std::set<std::string> names;
    for (size_t i = 0; i < specs.size(); ++i) {
      const IoSpec &io = specs[i];
      const std::string what = (out ? "output " : "input ") +
                               std::to_string(i) + " " + quoted(io.name);
      if (!names.insert(io.name).second)
        return fail(what + ": another model " + (out ? "output" : "input") +
                    " has the same name");
      const Buffer &b = m.buffers[io.buffer];
      if (io.dtype != b.dtype)
        return fail(what + " is declared " + dtypeName(io.dtype) + " but " +
                    describeBuffer(m, io.buffer) + " holds " +
                    dtypeName(b.dtype));
      if (io.dims.size() != b.rank)
        return fail(what + " has " + std::to_string(io.dims.size()) +
                    " dims but " + describeBuffer(m, io.buffer) + " has rank " +
                    std::to_string(b.rank));
    }
  }
  return Status::ok();
}

Status validateLlmEntryPoints(const Manifest &m) {
  if (Status s = checkEngineInputs(m); !s)
    return s;
  if (Status s = checkLogits(m); !s)
    return s;
  return checkAttentionSteps(m);
}

} // namespace ingot::format
