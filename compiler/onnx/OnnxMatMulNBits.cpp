//===- OnnxMatMulNBits.cpp - com.microsoft MatMulNBits --------------------===//
//
// Y = A x dequant(B)^T (+ bias), where B holds N rows of K weights in
// blocks of block_size, each packed `bits` wide (low bits first) with a
// float scale and a zero point per block (packed the same way, 2^(bits-1)
// when absent), as onnxruntime's 4-bit quantiser and its GenAI exports
// write it. The weight is dequantised here, at compile time, into an f32
// [K, N] weight for the existing matmul kernels: exact, but stored at 32
// bits, not 4 (a kernel on the packed blocks is issue 13's quantised
// linear).
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"
#include "compiler/onnx/OnnxWeights.h"

#include <cstring>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

struct NBitsLayout {
  int64_t k = 0, n = 0, bits = 4, block = 0, blocks = 0, blobBytes = 0;
};

/// Element `i` of a run packed `bits` wide from `data`, low bits first.
uint32_t unpack(const uint8_t *data, int64_t i, int64_t bits) {
  const int64_t bit = i * bits;
  return (data[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
}

/// The bytes of initializer input `i`, which must be of `dtype` with
/// `count` elements.
LogicalResult readInput(NodeContext &n, int i, const char *role, int dtype,
                        int64_t count, std::vector<char> &bytes) {
  const onnx::TensorProto *t =
      n.hasInput(i) ? n.ctx.initializerProto(n.node.input(i)) : nullptr;
  if (!t)
    return n.fail(std::string(role) + " is not an initializer",
                  "B, scales and zero_points stored in the model");
  int64_t have = 1;
  for (int64_t d : t->dims())
    have *= d;
  if (t->data_type() != dtype || have != count)
    return n.fail(std::string(role) + " is " + dtypeName(t->data_type()) +
                      " of " + std::to_string(have) + " elements",
                  dtypeName(dtype) + " of " + std::to_string(count));
  if (Status s = readTensor(*t, n.node.input(i), n.ctx.modelDir(), n.ctx.file(),
                            bytes);
      !s)
    return n.ctx.fail(s.message());
  return success();
}

/// dequant(B) transposed into [K, N] f32.
LogicalResult dequantize(NodeContext &n, const NBitsLayout &l,
                         std::vector<float> &w) {
  std::vector<char> packed, scales, zeros;
  const bool floatZeros =
      n.hasInput(3) && n.ctx.elementTypeOfName(n.node.input(3)) == n.f32();
  const int64_t zeroRow = (l.blocks * l.bits + 7) / 8;
  if (failed(readInput(n, 1, "B", onnx::TensorProto::UINT8,
                       l.n * l.blocks * l.blobBytes, packed)) ||
      failed(readInput(n, 2, "scales", onnx::TensorProto::FLOAT, l.n * l.blocks,
                       scales)) ||
      (n.hasInput(3) &&
       failed(readInput(n, 3, "zero_points",
                        floatZeros ? onnx::TensorProto::FLOAT
                                   : onnx::TensorProto::UINT8,
                        floatZeros ? l.n * l.blocks : l.n * zeroRow, zeros))))
    return failure();
  const auto *q = reinterpret_cast<const uint8_t *>(packed.data());
  const auto *s = reinterpret_cast<const float *>(scales.data());
  const auto *z = reinterpret_cast<const uint8_t *>(zeros.data());
  w.assign(size_t(l.k * l.n), 0.0f);
  for (int64_t col = 0; col < l.n; ++col)
    for (int64_t b = 0; b < l.blocks; ++b) {
      const int64_t blk = col * l.blocks + b;
      float zero = float(1u << (l.bits - 1));
      if (floatZeros)
        std::memcpy(&zero, zeros.data() + blk * 4, 4);
      else if (n.hasInput(3))
        zero = float(unpack(z + col * zeroRow, b, l.bits));
      const uint8_t *blob = q + blk * l.blobBytes;
      for (int64_t i = 0; i < l.block && b * l.block + i < l.k; ++i) {
        const float v = float(unpack(blob, i, l.bits));
        w[size_t((b * l.block + i) * l.n + col)] = (v - zero) * s[blk];
      }
    }
  return success();
}

} // namespace

LogicalResult convertMatMulNBits(NodeContext &n) {
  Value a, bias;
  if (failed(n.input(0, a)) || failed(n.requireType(a, "A", {n.f32()})) ||
      failed(n.optionalInput(5, bias)) ||
      (bias && failed(n.requireType(bias, "bias", {n.f32()}))))
    return failure();
  NBitsLayout l;
  l.k = n.attrInt("K", 0), l.n = n.attrInt("N", 0);
  l.bits = n.attrInt("bits", 4), l.block = n.attrInt("block_size", 0);
  if (n.ctx.hasError())
    return failure();
  if (n.hasInput(4))
    return n.fail("a g_idx input", "blocks in K order (no g_idx)");
  if (n.attrInt("weight_prepacked", 0) != 0)
    return n.fail("B prepacked for onnxruntime's kernels",
                  "weight_prepacked = 0 (the portable block layout)");
  if (l.bits != 2 && l.bits != 4 && l.bits != 8)
    return n.fail("bits " + std::to_string(l.bits), "2, 4 and 8");
  if (l.k < 1 || l.n < 1 || l.block < 16 || (l.block & (l.block - 1)))
    return n.fail("K " + std::to_string(l.k) + ", N " + std::to_string(l.n) +
                      ", block_size " + std::to_string(l.block),
                  "K, N >= 1 and a power-of-two block_size >= 16");
  l.blocks = (l.k + l.block - 1) / l.block;
  l.blobBytes = l.block * l.bits / 8;
  auto at = cast<RankedTensorType>(a.getType());
  if (at.getRank() < 1 || (!at.isDynamicDim(at.getRank() - 1) &&
                           at.getDimSize(at.getRank() - 1) != l.k))
    return n.fail("A's last dim is not K = " + std::to_string(l.k));
  std::vector<float> w;
  if (failed(dequantize(n, l, w)))
    return failure();
  onnx::TensorProto t;
  t.set_name(n.name() + ".dequantized_B");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(l.k);
  t.add_dims(l.n);
  t.set_raw_data(w.data(), w.size() * sizeof(float));
  FailureOr<Value> weight = n.ctx.addDerivedWeight(t);
  if (failed(weight))
    return failure();
  FailureOr<Value> y = n.build<graph::MatMulOp>(n.f32(), a, *weight);
  if (succeeded(y) && bias)
    y = n.build<graph::AddOp>(n.f32(), *y, bias);
  return n.setOutput(0, y);
}

} // namespace ingot::compiler::onnximport
