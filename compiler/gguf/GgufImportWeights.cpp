//===- GgufImportWeights.cpp - GGUF tensors under Hugging Face names ------===//
//
// GGUF names tensors "blk.N.attn_q.weight" with dims innermost first; the
// builders ask for "model.layers.N.self_attn.q_proj.weight" with the HF
// shape (the dims reversed). Q8_0, Q4_0 and Q4_1 rows are ingot's q8, q4 and
// q4m rows at group 32 byte for byte (ingot/Quant.h), so they are kept;
// Q5_0, Q6_K and Q4_K rows are repacked (GgufRepack.h); produce() gives
// every tensor's values.
//
//===----------------------------------------------------------------------===//
#include "compiler/gguf/GgufDequant.h"
#include "compiler/gguf/GgufImportInternal.h"
#include "ingot/NonFiniteScan.h"
#include "ingot/Quant.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>

namespace ingot::compiler::gguf {
namespace {

using NamePair = std::pair<const char *, const char *>;
using NameTable = std::span<const NamePair>;

/// Per-layer GGUF tensor stems and their HF module paths, as llama.cpp's
/// converter names them for each architecture family.
constexpr NamePair kLlamaLayerNames[] = {
    {"attn_norm", "input_layernorm"},
    {"ffn_norm", "post_attention_layernorm"},
    {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},
    {"attn_output", "self_attn.o_proj"},
    {"attn_q_norm", "self_attn.q_norm"}, // qwen3
    {"attn_k_norm", "self_attn.k_norm"},
    {"ffn_gate", "mlp.gate_proj"},
    {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},
};
// Gemma's four norms: ffn_norm is the one before the MLP here.
constexpr NamePair kGemmaLayerNames[] = {
    {"attn_norm", "input_layernorm"},
    {"post_attention_norm", "post_attention_layernorm"},
    {"ffn_norm", "pre_feedforward_layernorm"},
    {"post_ffw_norm", "post_feedforward_layernorm"},
    {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},
    {"attn_output", "self_attn.o_proj"},
    {"attn_q_norm", "self_attn.q_norm"}, // gemma3
    {"attn_k_norm", "self_attn.k_norm"},
    {"ffn_gate", "mlp.gate_proj"},
    {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},
};
// Phi-3 keeps its fused projections: [q; k; v] and [gate; up] rows.
constexpr NamePair kPhi3LayerNames[] = {
    {"attn_norm", "input_layernorm"},
    {"ffn_norm", "post_attention_layernorm"},
    {"attn_qkv", "self_attn.qkv_proj"},
    {"attn_output", "self_attn.o_proj"},
    {"ffn_up", "mlp.gate_up_proj"},
    {"ffn_down", "mlp.down_proj"},
};

NameTable layerNamesOf(llvm::StringRef arch) {
  if (arch == "gemma2" || arch == "gemma3")
    return kGemmaLayerNames;
  if (arch == "phi3")
    return kPhi3LayerNames;
  return kLlamaLayerNames;
}
constexpr std::pair<const char *, const char *> kGlobalNames[] = {
    {"token_embd", "model.embed_tokens"},
    {"output_norm", "model.norm"},
    {"output", "lm_head"},
};

/// "blk.3.attn_q.weight" -> "model.layers.3.self_attn.q_proj.weight".
std::optional<std::string> hfNameOf(llvm::StringRef name,
                                    llvm::StringRef arch) {
  auto [stem, suffix] = name.rsplit('.');
  if (suffix != "weight" && suffix != "bias")
    return std::nullopt;
  for (auto [g, hf] : kGlobalNames)
    if (stem == g)
      return std::string(hf) + "." + suffix.str();
  if (!stem.consume_front("blk."))
    return std::nullopt;
  auto [layer, part] = stem.split('.');
  unsigned n;
  if (layer.getAsInteger(10, n))
    return std::nullopt;
  for (auto [g, hf] : layerNamesOf(arch))
    if (part == g)
      return "model.layers." + layer.str() + "." + hf + "." + suffix.str();
  return std::nullopt;
}

/// The HF-order row that GGUF row-interleaved head data puts at `row`:
/// llama.cpp stores each head's rows as (j, half) where HF has (half, j).
int64_t ggufRowOf(int64_t hfRow, int64_t rowsPerHead) {
  const int64_t half = rowsPerHead / 2;
  const int64_t head = hfRow / rowsPerHead, r = hfRow % rowsPerHead;
  return head * rowsPerHead + (r % half) * 2 + r / half;
}

/// A block of a kept row whose f16 scale or minimum is not finite.
struct NonFiniteBlock {
  uint64_t value; // index of the block's first value
  bool isNaN;
};

/// The first such block of a row of `k` values in ingot's block format
/// `format` with groups of `group` (ingot/Quant.h: each block starts with
/// an f16 scale, q4m's with an f16 minimum after it).
std::optional<NonFiniteBlock> firstNonFiniteBlock(DType format, int64_t group,
                                                  const void *row, int64_t k) {
  const auto *p = static_cast<const uint8_t *>(row);
  const int64_t headers = quantHeaderBytes(format) / 2;
  for (int64_t first = 0; first < k; first += group) {
    const int64_t g = std::min(group, k - first);
    for (int64_t h = 0; h < headers; ++h) {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * h, 2);
      if ((bits & 0x7c00) == 0x7c00) // all-ones exponent
        return NonFiniteBlock{uint64_t(first), (bits & 0x03ff) != 0};
    }
    p += quantBlockBytes(format, g);
  }
  return std::nullopt;
}

class GgufWeightSource : public WeightSource {
public:
  GgufWeightSource(std::unique_ptr<GgufFile> file,
                   std::map<std::string, MappedTensor> tensors)
      : file_(std::move(file)), tensors_(std::move(tensors)) {}

  Status produce(const std::string &name, const ByteSink &sink) override {
    Ref r;
    if (Status s = parse(name, r); !s)
      return s;
    const GgmlType type = r.t->info->type.type;
    const bool stored =
        !r.plusOne && (type == GgmlType::F32 || type == GgmlType::F16 ||
                       type == GgmlType::BF16);
    // Every value is scanned for NaN and infinity on its way to the sink.
    NonFiniteScan scan(stored ? *r.t->view.dtype : DType::F32);
    Status s;
    if (stored) {
      s = rows(r, [&](const void *p, size_t n) {
        scan.scan(p, n);
        sink(p, n);
      });
    } else { // quantised (or widened): rows of values, one at a time
      const int64_t k = r.t->info->dims[0];
      std::vector<float> values(static_cast<size_t>(k));
      s = rows(r, [&](const void *row, size_t) {
        dequantizeGgmlRow(r.t->info->type, row, k, values.data());
        scan.scan(values.data(), values.size() * sizeof(float));
        sink(values.data(), values.size() * sizeof(float));
      });
    }
    if (s && scan.found())
      return nonFiniteError(file_->path(), r.t->info->name,
                            elementOf(r, scan.firstIndex()), scan.firstIsNaN());
    return s;
  }

  std::optional<Blocks> storedBlocks(const std::string &name) const override {
    Ref r;
    std::optional<GgmlRepack> p;
    if (parse(name, r) && !r.plusOne)
      p = ggmlRepackOf(r.t->info->type.type);
    if (!p)
      return std::nullopt;
    return Blocks{p->format, p->group};
  }

  Status produceStored(const std::string &name, const ByteSink &sink) override {
    if (!storedBlocks(name))
      return WeightSource::produceStored(name, sink);
    Ref r;
    if (Status s = parse(name, r); !s)
      return s;
    const GgmlRepack p = *ggmlRepackOf(r.t->info->type.type);
    const int64_t k = r.t->info->dims[0];
    std::vector<uint8_t> out(size_t(quantRowBytes(p.format, k, p.group)));
    // Blocks are kept as stored, but a NaN or infinite scale (or minimum)
    // would poison every value of its block: each block's f16 header is
    // checked on its way to the sink (the values themselves are integers).
    std::optional<NonFiniteBlock> bad;
    uint64_t streamed = 0; // rows so far
    Status s = rows(r, [&](const void *row, size_t bytes) {
      const void *kept = row;
      if (p.kind != RepackKind::Copy) {
        repackGgmlRow(r.t->info->type, row, k, out.data());
        kept = out.data(), bytes = out.size();
      }
      if (!bad)
        if ((bad = firstNonFiniteBlock(p.format, p.group, kept, k)))
          bad->value += streamed * uint64_t(k);
      ++streamed;
      sink(kept, bytes);
    });
    if (s && bad)
      return nonFiniteError(file_->path(), r.t->info->name,
                            elementOf(r, bad->value), bad->isNaN);
    return s;
  }

private:
  /// A weight name resolved: the tensor, a row range ("#rows=A:B", of a
  /// fused Phi-3 tensor) and "#plus1" (Gemma's norms: llama.cpp stored
  /// 1 + w already, so it only widens the values to f32).
  struct Ref {
    const MappedTensor *t = nullptr;
    int64_t begin = 0, end = -1; // rows; end -1 = all
    bool plusOne = false;
  };
  Status parse(const std::string &name, Ref &r) const {
    auto [key, suffix] = llvm::StringRef(name).split('#');
    auto it = tensors_.find(key.str());
    if (it == tensors_.end())
      return missing(name);
    r.t = &it->second;
    r.plusOne = suffix == "plus1";
    if (suffix.empty() || r.plusOne)
      return Status::ok();
    auto [first, last] = suffix.drop_front(5).split(':');
    if (!suffix.starts_with("rows=") || first.getAsInteger(10, r.begin) ||
        last.getAsInteger(10, r.end) || r.begin < 0 || r.begin >= r.end ||
        r.end > r.t->info->rows() || r.t->permuteHeads > 0)
      return Status::error(file_->path() + ": weight '" + name +
                           "': bad row slice of a tensor with " +
                           std::to_string(r.t->info->rows()) + " rows");
    return Status::ok();
  }
  /// The index in the GGUF tensor of element `i` as rows() streams `r`.
  uint64_t elementOf(const Ref &r, uint64_t i) const {
    const MappedTensor &t = *r.t;
    const GgufTensorInfo &info = *t.info;
    const bool perElement = info.dims.size() == 1 && t.permuteHeads > 0;
    const uint64_t k = perElement ? 1 : uint64_t(info.dims[0]);
    const int64_t n = perElement ? info.dims[0] : info.rows();
    int64_t row = r.begin + int64_t(i / k);
    if (t.permuteHeads > 0)
      row = ggufRowOf(row, n / t.permuteHeads);
    return uint64_t(row) * k + i % k;
  }
  Status missing(const std::string &name) const {
    return Status::error(file_->path() + ": no tensor for weight '" + name +
                         "'");
  }

  /// Streams the stored rows in HF order, one sink call per row; a permuted
  /// tensor is read whole first (one tensor in memory at a time).
  Status rows(const Ref &r, const ByteSink &sink) const {
    const MappedTensor &t = *r.t;
    const GgufTensorInfo &info = *t.info;
    uint64_t rowBytes = uint64_t(ggmlRowBytes(info.type, info.dims[0]));
    int64_t n = info.rows();
    if (info.dims.size() == 1 && t.permuteHeads > 0) {
      // A permuted bias (float, checked when mapped): its rows are elements.
      n = info.dims[0];
      rowBytes /= uint64_t(n);
    }
    std::vector<uint8_t> all;
    if (Status s = file_->read(info.offset, info.bytes,
                               [&](const void *p, size_t size) {
                                 auto *c = static_cast<const uint8_t *>(p);
                                 all.insert(all.end(), c, c + size);
                               });
        !s)
      return s;
    const int64_t end = r.end < 0 ? n : r.end;
    for (int64_t row = r.begin; row < end; ++row) {
      int64_t src = row;
      if (t.permuteHeads > 0)
        src = ggufRowOf(row, n / t.permuteHeads);
      sink(all.data() + uint64_t(src) * rowBytes, rowBytes);
    }
    return Status::ok();
  }

  std::unique_ptr<GgufFile> file_;
  std::map<std::string, MappedTensor> tensors_;
};

} // namespace

std::optional<KeptFormat> keptFormatOf(GgmlType type) {
  if (std::optional<GgmlRepack> r = ggmlRepackOf(type))
    return KeptFormat{r->format, r->group, r->kind};
  // 5-bit codes with a minimum fit no ingot format: q8 g32 of their values
  // rounds each by at most half a step, 1/254 of its group's largest.
  if (type == GgmlType::Q5_1 || type == GgmlType::Q5_K)
    return KeptFormat{DType::Q8, 32, std::nullopt};
  return std::nullopt;
}

Status mapGgufTensors(const GgufFile &file, const GgufModel &model,
                      std::map<std::string, MappedTensor> &out) {
  for (const GgufTensorInfo &info : file.tensors()) {
    std::optional<std::string> hf = hfNameOf(info.name, model.arch);
    if (!hf)
      return Status::error(
          file.path() + ": tensor '" + info.name + "' is not one the " +
          model.arch + " importer knows" +
          (info.name == "rope_freqs.weight"
               ? " (Llama 3.1-style rope scaling stored as a tensor is not "
                 "supported yet)"
               : ""));
    MappedTensor m;
    m.info = &info;
    m.view.dtypeName = info.type.name;
    m.view.shape.assign(info.dims.rbegin(), info.dims.rend());
    switch (info.type.type) {
    case GgmlType::F16: m.view.dtype = DType::F16; break;
    case GgmlType::BF16: m.view.dtype = DType::BF16; break;
    default: m.view.dtype = DType::F32; break; // f32, or dequantised
    }
    m.view.elementSize = dtypeSize(*m.view.dtype);
    llvm::StringRef name(info.name);
    const bool q = name.ends_with(".attn_q.weight") ||
                   name.ends_with(".attn_q.bias");
    const bool k = name.ends_with(".attn_k.weight") ||
                   name.ends_with(".attn_k.bias");
    if (model.permutedQk && (q || k)) {
      m.permuteHeads = q ? model.heads : model.kvHeads;
      const int64_t rows = info.rows() * (info.dims.size() == 1 ? info.dims[0] : 1);
      const bool blocks1d = info.dims.size() == 1 && info.type.blockValues > 1;
      if (info.dims.size() > 2 || blocks1d || rows % (2 * m.permuteHeads))
        return Status::error(file.path() + ": tensor '" + info.name + "' " +
                             hf::shapeString(m.view.shape) +
                             " does not split into " +
                             std::to_string(m.permuteHeads) +
                             " heads of an even size");
    }
    out[*hf] = std::move(m);
  }
  return Status::ok();
}

const hf::SafetensorsTensor *GgufCatalog::lookup(llvm::StringRef key,
                                             std::string *file) const {
  auto it = tensors_.find(key.str());
  if (it == tensors_.end())
    return nullptr;
  if (file)
    *file = file_.path();
  return &it->second.view;
}

std::vector<std::string> GgufCatalog::names() const {
  std::vector<std::string> out;
  for (const auto &[name, t] : tensors_)
    out.push_back(name);
  return out;
}

std::string GgufCatalog::storedName(llvm::StringRef key) const {
  auto it = tensors_.find(key.str());
  return it == tensors_.end() ? key.str() : it->second.info->name;
}

std::unique_ptr<WeightSource>
makeGgufWeightSource(std::unique_ptr<GgufFile> file,
                     std::map<std::string, MappedTensor> tensors) {
  return std::make_unique<GgufWeightSource>(std::move(file),
                                            std::move(tensors));
}

} // namespace ingot::compiler::gguf
