//===- QuantScheme.cpp - config.json's quantization_config ----------------===//
//
// Which pre-quantised layout a Hugging Face directory uses, read with every
// setting checked: a method or variant ingot does not read is an error
// naming the key, never a silently wrong model.
//
//===----------------------------------------------------------------------===//
#include "compiler/hf/QuantizedCheckpoint.h"

#include "llvm/ADT/StringRef.h"

namespace ingot::compiler::hf {
namespace {

/// fp8: e4m3 values, optionally in blocks of weight_block_size.
Status readFp8Scheme(const HfJson &q, QuantScheme &scheme,
                     std::optional<QuantScheme> *out) {
  std::string fmt;
  if (Status s = q.getString("fmt", "e4m3", fmt); !s)
    return s;
  if (fmt != "e4m3")
    return q.error("fmt", "is '" + fmt + "' — supported: e4m3");
  if (Status s = q.getIntList("weight_block_size", scheme.blockSize); !s)
    return s;
  if (!scheme.blockSize.empty() && scheme.blockSize.size() != 2)
    return q.error("weight_block_size", "must be [rows, columns]");
  scheme.bits = 8;
  *out = scheme;
  return Status::ok();
}

} // namespace

Status readQuantScheme(const HfJson &config,
                       std::optional<QuantScheme> *out) {
  std::optional<HfJson> q;
  if (Status s = config.getObject("quantization_config", q); !s)
    return s;
  *out = std::nullopt;
  if (!q)
    return Status::ok();
  QuantScheme scheme;
  if (Status s = q->getString("quant_method", scheme.method); !s)
    return s;
  if (scheme.method == "fp8")
    return readFp8Scheme(*q, scheme, out);
  if (scheme.method != "gptq" && scheme.method != "awq")
    return q->error("quant_method", "is '" + scheme.method +
                                        "', which is not supported — "
                                        "supported: gptq, awq, fp8");
  int64_t bits;
  if (Status s = q->getInt("bits", 4, bits); !s)
    return s;
  if (Status s = q->getInt("group_size", 128, scheme.group); !s)
    return s;
  if (bits != 4 && (bits != 8 || scheme.method == "awq"))
    return q->error("bits", "is " + std::to_string(bits) + "; supported: 4" +
                                (scheme.method == "gptq" ? " and 8" : ""));
  if (scheme.group == 0 || scheme.group < -1)
    return q->error("group_size", "must be positive or -1");
  scheme.bits = int(bits);
  if (scheme.method == "gptq") {
    // v1 ("gptq", the default) stores each zero point minus one.
    std::string format;
    if (Status s = q->getString("checkpoint_format", "gptq", format); !s)
      return s;
    if (format != "gptq" && format != "gptq_v2")
      return q->error("checkpoint_format",
                      "is '" + format + "' — supported: gptq, gptq_v2");
    scheme.zerosMinusOne = format == "gptq";
  } else {
    std::string version;
    bool zeroPoint;
    if (Status s = q->getString("version", "gemm", version); !s)
      return s;
    if (Status s = q->getBool("zero_point", true, zeroPoint); !s)
      return s;
    if (llvm::StringRef(version).lower() != "gemm" || !zeroPoint)
      return q->error("version", "'" + version + "'" +
                                     (zeroPoint ? "" : " without zero points") +
                                     " is not supported — supported: gemm "
                                     "with zero_point");
  }
  *out = scheme;
  return Status::ok();
}

} // namespace ingot::compiler::hf
