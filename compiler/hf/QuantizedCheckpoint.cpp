//===- QuantizedCheckpoint.cpp - GPTQ and AWQ linear weights --------------===//
#include "compiler/hf/QuantizedCheckpoint.h"
#include "ingot/NonFiniteScan.h"

#include "compiler/hf/Fp8Checkpoint.h"
#include "compiler/hf/HfWeights.h"
#include "ingot/Quant.h"

#include <cmath>
#include <cstring>
#include <set>

namespace ingot::compiler::hf {
namespace {

// AWQ's GEMM kernels interleave the eight 4-bit values of an int32: nibble
// t holds column [0, 2, 4, 6, 1, 3, 5, 7][t] of its group of eight
// (AutoAWQ's AWQ_ORDER), so column c sits in nibble kAwqNibble[c].
constexpr int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/// One packed linear, unpacked: codes [n][k], and per (group, n) the zero
/// point and the f16 scale.
struct Unpacked {
  int64_t n = 0, k = 0, groups = 0, group = 0;
  std::vector<uint8_t> codes;
  std::vector<int32_t> zeros;
  std::vector<uint16_t> scales;
  std::vector<int32_t> groupOf; // per k
};

Status readBytes(const HfTensorStore &store, const std::string &key,
                 const char *dtype, std::vector<uint8_t> &out,
                 std::vector<int64_t> *shape) {
  std::optional<HfTensorStore::Entry> e = store.find(key);
  if (!e)
    return Status::error(store.indexPath() + ": missing tensor '" + key + "'");
  if (e->tensor->dtypeName != dtype)
    return Status::error(e->file->path() + ": tensor '" + key + "' has dtype " +
                         e->tensor->dtypeName + ", expected " + dtype);
  out.clear();
  *shape = e->tensor->shape;
  if (Status s =
          e->file->read(e->tensor->begin, e->tensor->end - e->tensor->begin,
                        [&](const void *p, size_t n) {
                          auto *c = static_cast<const uint8_t *>(p);
                          out.insert(out.end(), c, c + n);
                        });
      !s)
    return s;
  if (llvm::StringRef(dtype) != "F16")
    return Status::ok();
  // The f16 scales are the only floats of a packed weight.
  NonFiniteScan scan(DType::F16);
  scan.scan(out.data(), out.size());
  if (scan.found())
    return nonFiniteError(e->file->path(), key, scan.firstIndex(),
                          scan.firstIsNaN());
  return Status::ok();
}

uint32_t word(const std::vector<uint8_t> &b, int64_t i) {
  uint32_t w;
  std::memcpy(&w, b.data() + 4 * i, 4);
  return w;
}

/// The `bits`-wide field `t` of packed word w.
int32_t field(uint32_t w, int bits, int t) {
  return int32_t((w >> (bits * t)) & ((1u << bits) - 1));
}

Status shapeError(const std::string &prefix, const std::string &what) {
  return Status::error("packed weight '" + prefix + "': " + what);
}

/// The group of every input feature: X.g_idx when the checkpoint has one
/// (GPTQ with desc_act orders features by importance), else k / group.
Status readGroups(const HfTensorStore &store, const std::string &prefix,
                  Unpacked &u) {
  u.groupOf.resize(size_t(u.k));
  for (int64_t k = 0; k < u.k; ++k)
    u.groupOf[k] = int32_t(k / u.group);
  if (!store.find(prefix + ".g_idx"))
    return Status::ok();
  std::vector<uint8_t> b;
  std::vector<int64_t> shape;
  if (Status st = readBytes(store, prefix + ".g_idx", "I32", b, &shape); !st)
    return st;
  if (shape.size() != 1 || shape[0] != u.k)
    return shapeError(prefix, "g_idx " + shapeString(shape) + " is not [" +
                                  std::to_string(u.k) + "]");
  for (int64_t k = 0; k < u.k; ++k) {
    const int32_t g = int32_t(word(b, k));
    if (g < 0 || g >= u.groups)
      return shapeError(prefix, "g_idx[" + std::to_string(k) + "] = " +
                                    std::to_string(g) + " is not a group");
    u.groupOf[k] = g;
  }
  return Status::ok();
}

/// Reads X.qzeros / X.scales (/ X.g_idx) of `prefix`, and with `codes`
/// X.qweight too (the big one, read only when the weight is written).
Status unpack(const HfTensorStore &store, const QuantScheme &s,
              const std::string &prefix, bool codes, Unpacked &u) {
  std::vector<uint8_t> qw, qz, sc;
  std::vector<int64_t> qwShape, qzShape, scShape;
  std::optional<HfTensorStore::Entry> qwEntry = store.find(prefix + ".qweight");
  if (!qwEntry || qwEntry->tensor->dtypeName != "I32")
    return shapeError(prefix, "qweight is missing or not I32");
  qwShape = qwEntry->tensor->shape;
  if (codes)
    if (Status st = readBytes(store, prefix + ".qweight", "I32", qw, &qwShape);
        !st)
      return st;
  if (Status st = readBytes(store, prefix + ".qzeros", "I32", qz, &qzShape); !st)
    return st;
  if (Status st = readBytes(store, prefix + ".scales", "F16", sc, &scShape); !st)
    return st;
  const int pack = 32 / s.bits;
  const bool awq = s.method == "awq";
  if (qwShape.size() != 2 || scShape.size() != 2 || qzShape.size() != 2)
    return shapeError(prefix, "qweight, qzeros and scales must be 2-D");
  u.k = awq ? qwShape[0] : qwShape[0] * pack;
  u.n = awq ? qwShape[1] * pack : qwShape[1];
  u.groups = scShape[0];
  u.group = s.group > 0 ? s.group : u.k;
  if (scShape[1] != u.n || u.groups != (u.k + u.group - 1) / u.group ||
      qzShape[0] != u.groups || qzShape[1] * pack != u.n)
    return shapeError(prefix, "qweight " + shapeString(qwShape) + ", qzeros " +
                                  shapeString(qzShape) + " and scales " +
                                  shapeString(scShape) +
                                  " do not agree with group_size " +
                                  std::to_string(u.group));
  // GPTQ packs codes along K (qweight [K/pack, N]) and zeros along N; AWQ
  // packs both along N, interleaved (qweight [K, N/8]).
  auto alongN = [&](const std::vector<uint8_t> &b, int64_t row, int64_t n) {
    const uint32_t w = word(b, row * (u.n / pack) + n / pack);
    return field(w, s.bits, awq ? kAwqNibble[n % 8] : int(n % pack));
  };
  u.codes.resize(codes ? size_t(u.n * u.k) : 0);
  for (int64_t k = 0; codes && k < u.k; ++k)
    for (int64_t n = 0; n < u.n; ++n)
      u.codes[n * u.k + k] = uint8_t(
          awq ? alongN(qw, k, n)
              : field(word(qw, (k / pack) * u.n + n), s.bits, int(k % pack)));
  u.zeros.resize(size_t(u.groups * u.n));
  u.scales.resize(size_t(u.groups * u.n));
  for (int64_t g = 0; g < u.groups; ++g)
    for (int64_t n = 0; n < u.n; ++n) {
      u.zeros[g * u.n + n] = alongN(qz, g, n) + (s.zerosMinusOne ? 1 : 0);
      std::memcpy(&u.scales[g * u.n + n], sc.data() + 2 * (g * u.n + n), 2);
    }
  return readGroups(store, prefix, u);
}

/// The format a packed weight is kept in (see the header).
PackedFormat chooseFormat(const Unpacked &u, int bits) {
  bool contiguous = true, symmetric = true;
  for (int64_t k = 0; k < u.k; ++k)
    contiguous &= u.groupOf[k] == k / u.group;
  for (int32_t z : u.zeros)
    symmetric &= z == (1 << (bits - 1));
  // Requantised values go to 8 bits: regrouping 4-bit codes into new 4-bit
  // groups (desc_act) moved the tiny test model's logits by 25%, q8 by 2%.
  if (!contiguous || (bits == 8 && !symmetric))
    return {DType::Q8, u.group, false, true};
  if (symmetric)
    return {bits == 4 ? DType::Q4 : DType::Q8, u.group, true, false};
  return {DType::Q4M, u.group, false, false};
}

/// W[n][k] = scale · (code - zero), in f32 as the checkpoint's kernels do.
std::vector<float> valuesOf(const Unpacked &u) {
  std::vector<float> w(size_t(u.n * u.k));
  for (int64_t n = 0; n < u.n; ++n)
    for (int64_t k = 0; k < u.k; ++k) {
      const int64_t at = u.groupOf[k] * u.n + n;
      w[n * u.k + k] = f16BitsToFloat(u.scales[at]) *
                       float(int32_t(u.codes[n * u.k + k]) - u.zeros[at]);
    }
  return w;
}

void storeF16(uint8_t *p, uint16_t bits) { std::memcpy(p, &bits, 2); }

/// int4 codes of one group into ingot's runs of 32 (ingot/Quant.h: byte i
/// holds value i and value i + ceil(t/2) of a run of t).
uint8_t *packNibbles(const uint8_t *codes, int64_t g, uint8_t *out) {
  for (int64_t r = 0; r < g; r += kQ4Run) {
    const int64_t t = std::min<int64_t>(kQ4Run, g - r), half = (t + 1) / 2;
    for (int64_t i = 0; i < half; ++i)
      *out++ = uint8_t(codes[r + i] |
                       (i + half < t ? codes[r + i + half] << 4 : 0));
  }
  return out;
}

/// The rows of `u` in an exact-path format (q4, q8 symmetric, q4m).
std::vector<uint8_t> blocksOf(const Unpacked &u, const PackedFormat &f) {
  std::vector<uint8_t> out(
      size_t(quantTensorBytes(f.format, u.n, u.k, f.group)));
  uint8_t *p = out.data();
  for (int64_t n = 0; n < u.n; ++n)
    for (int64_t g = 0; g < u.groups; ++g) {
      const int64_t at = g * u.n + n, k0 = g * u.group;
      const int64_t len = std::min(u.group, u.k - k0);
      const uint8_t *codes = u.codes.data() + n * u.k + k0;
      storeF16(p, u.scales[at]);
      if (f.format == DType::Q8) {
        for (int64_t i = 0; i < len; ++i)
          p[2 + i] = uint8_t(int8_t(int32_t(codes[i]) - u.zeros[at]));
        p += quantBlockBytes(DType::Q8, len);
        continue;
      }
      if (f.format == DType::Q4M) {
        const float min = -f16BitsToFloat(u.scales[at]) * float(u.zeros[at]);
        storeF16(p + 2, floatToF16Bits(min));
      }
      // q4's implicit zero is 8, the symmetric checkpoints' zero.
      packNibbles(codes, len, p + quantHeaderBytes(f.format));
      p += quantBlockBytes(f.format, len);
    }
  return out;
}

} // namespace
} // namespace ingot::compiler::hf

namespace ingot::compiler::hf {
namespace {

/// The fp8 weights: every F8_E4M3 "X.weight".
Status scanFp8(const HfTensorStore &store, const QuantScheme &scheme,
               std::map<std::string, SafetensorsTensor, std::less<>> &views,
               std::map<std::string, PackedFormat> &formats) {
  for (const std::string &key : store.keys()) {
    std::optional<HfTensorStore::Entry> e = store.find(key);
    if (e->tensor->dtypeName != "F8_E4M3" ||
        !llvm::StringRef(key).ends_with(".weight"))
      continue;
    Fp8Weight w;
    if (Status s = w.load(store, key.substr(0, key.size() - 7),
                          scheme.blockSize, /*bytes=*/false);
        !s)
      return s;
    SafetensorsTensor view;
    view.dtypeName = "F8_E4M3 (fp8)";
    view.dtype = DType::F32;
    view.elementSize = 4;
    view.shape = {w.n, w.k};
    views[key] = view;
    formats[key] = {DType::F8E4M3, w.group, false, false};
  }
  return Status::ok();
}

} // namespace

QuantizedCatalog::QuantizedCatalog(const HfTensorStore &store,
                                   QuantScheme scheme)
    : store_(store), scheme_(std::move(scheme)) {}

Status QuantizedCatalog::scan() {
  if (scheme_.method == "fp8")
    return scanFp8(store_, scheme_, views_, formats_);
  const std::string suffix = ".qweight";
  for (const std::string &key : store_.keys()) {
    if (!llvm::StringRef(key).ends_with(suffix))
      continue;
    const std::string prefix = key.substr(0, key.size() - suffix.size());
    Unpacked u;
    if (Status s = unpack(store_, scheme_, prefix, /*codes=*/false, u); !s)
      return Status::error(store_.indexPath() + ": " + s.message());
    SafetensorsTensor view;
    view.dtypeName = scheme_.method + " int" + std::to_string(scheme_.bits);
    view.dtype = DType::F32; // produced as values, or kept as blocks
    view.elementSize = 4;
    view.shape = {u.n, u.k};
    views_[prefix + ".weight"] = view;
    formats_[prefix + ".weight"] = chooseFormat(u, scheme_.bits);
  }
  return Status::ok();
}

std::vector<std::string> QuantizedCatalog::names() const {
  // The tensors a packed X.weight is made of. fp8's input_scale (a static
  // activation scale) goes with them: ingot keeps activations in f32, so
  // it has no use for one.
  static const char *const kParts[] = {
      "qweight", "qzeros",       "scales",           "g_idx",
      "weight",  "weight_scale", "weight_scale_inv", "input_scale"};
  std::set<std::string> out;
  for (const auto &[name, view] : views_)
    out.insert(name);
  for (const std::string &key : store_.keys()) {
    auto [prefix, leaf] = llvm::StringRef(key).rsplit('.');
    bool part = false;
    for (const char *p : kParts)
      part = part || (leaf == p && views_.count((prefix + ".weight").str()));
    if (!part)
      out.insert(key);
  }
  return {out.begin(), out.end()};
}

const SafetensorsTensor *QuantizedCatalog::lookup(llvm::StringRef key,
                                                  std::string *file) const {
  if (auto it = views_.find(key); it != views_.end()) {
    if (file)
      *file = store_.indexPath();
    return &it->second;
  }
  return store_.lookup(key, file);
}

namespace {

class QuantizedWeightSource : public WeightSource {
public:
  QuantizedWeightSource(std::unique_ptr<WeightSource> plain,
                        std::unique_ptr<QuantizedCatalog> catalog)
      : plain_(std::move(plain)), catalog_(std::move(catalog)) {}

  Status produce(const std::string &name, const ByteSink &sink) override {
    if (!catalog_->formats().count(name))
      return plain_->produce(name, sink);
    std::vector<float> w;
    if (isFp8()) {
      Fp8Weight f;
      if (Status s = readFp8(name, f); !s)
        return s;
      w = f.values();
    } else {
      Unpacked u;
      if (Status s = read(name, u); !s)
        return s;
      w = valuesOf(u);
    }
    sink(w.data(), w.size() * sizeof(float));
    return Status::ok();
  }

  std::optional<Blocks> storedBlocks(const std::string &name) const override {
    auto it = catalog_->formats().find(name);
    if (it == catalog_->formats().end() || it->second.requantised)
      return std::nullopt;
    return Blocks{it->second.format, it->second.group};
  }

  Status produceStored(const std::string &name, const ByteSink &sink) override {
    if (!storedBlocks(name))
      return WeightSource::produceStored(name, sink);
    std::vector<uint8_t> b;
    if (isFp8()) {
      Fp8Weight f;
      if (Status s = readFp8(name, f); !s)
        return s;
      b = f.blocks();
    } else {
      Unpacked u;
      if (Status s = read(name, u); !s)
        return s;
      b = blocksOf(u, catalog_->formats().at(name));
    }
    sink(b.data(), b.size());
    return Status::ok();
  }

private:
  bool isFp8() const { return catalog_->scheme().method == "fp8"; }
  Status readFp8(const std::string &name, Fp8Weight &f) const {
    return f.load(catalog_->store(), name.substr(0, name.size() - 7),
                  catalog_->scheme().blockSize, /*bytes=*/true);
  }

  Status read(const std::string &name, Unpacked &u) const {
    const std::string prefix = name.substr(0, name.size() - 7); // ".weight"
    if (Status s = unpack(catalog_->store(), catalog_->scheme(), prefix,
                          /*codes=*/true, u);
        !s)
      return Status::error(catalog_->store().indexPath() + ": " + s.message());
    return Status::ok();
  }

  std::unique_ptr<WeightSource> plain_;
  std::unique_ptr<QuantizedCatalog> catalog_;
};

} // namespace

std::unique_ptr<WeightSource>
makeQuantizedWeightSource(std::unique_ptr<WeightSource> plain,
                          std::unique_ptr<QuantizedCatalog> catalog) {
  return std::make_unique<QuantizedWeightSource>(std::move(plain),
                                                 std::move(catalog));
}

} // namespace ingot::compiler::hf
