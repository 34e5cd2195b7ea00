//===- GatherND.cpp - gather_nd: slices addressed by index tuples ---------===//
//
// ONNX GatherND. Data is viewed as [batch, dims addressed by the tuple...,
// slice] and each index tuple selects one slice of its batch, copied as
// bytes; indices are checked against their dims (negative ones count from
// the end).
//
//===----------------------------------------------------------------------===//

#include "cpu/TensorKernels.h"

#include <cstring>

namespace ingot::cpu {
namespace {

Status gatherNDKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::I64}); !s)
    return s;
  const KernelInput &data = ctx.input(0), &idx = ctx.input(1);
  if (Status s = ctx.expectOutputDType(0, {data.dtype}); !s)
    return s;
  int64_t b;
  if (Status s = ctx.attrInt("batch_dims", &b, 0); !s)
    return s;
  const int64_t r = data.shape.size(), q = idx.shape.size();
  const int64_t k = q ? idx.shape.back() : 0;
  if (q < 1 || b < 0 || b >= std::min(r, q) || k < 1 || k > r - b)
    return ctx.error("batch_dims " + std::to_string(b) + " and indices " +
                     shape::toString(idx.shape) + " do not fit data " +
                     shape::toString(data.shape));
  for (int64_t d = 0; d < b; ++d)
    if (data.shape[d] != idx.shape[d])
      return ctx.error("batch dim " + std::to_string(d) + " differs");
  shape::Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  const int64_t batches = dimProduct(data.shape, 0, b);
  const int64_t slice = dimProduct(data.shape, b + k, r);
  const int64_t block = dimProduct(data.shape, b, r);
  const int64_t tuples = batches ? idx.numElements() / k / batches : 0;
  const std::vector<int64_t> st = stridesOf(data.shape);
  const size_t esize = dtypeSize(data.dtype), sliceBytes = slice * esize;
  const auto *src = static_cast<const uint8_t *>(data.data);
  auto *dst = static_cast<uint8_t *>(ctx.output(0).data);
  const int64_t *ix = idx.as<int64_t>();
  for (int64_t t = 0; t < batches * tuples; ++t) {
    int64_t off = (t / std::max<int64_t>(tuples, 1)) * block;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = data.shape[b + j];
      int64_t v = ix[t * k + j];
      if (v < -dim || v >= dim)
        return ctx.error("index " + std::to_string(v) + " out of range for " +
                         "dim " + std::to_string(b + j) + " of size " +
                         std::to_string(dim));
      off += (v < 0 ? v + dim : v) * st[b + j];
    }
    if (sliceBytes)
      std::memcpy(dst + t * sliceBytes, src + off * esize, sliceBytes);
  }
  return Status::ok();
}

} // namespace

void addGatherNDKernels(std::vector<KernelImpl> &table) {
  table.push_back({"gather_nd", gatherNDKernel});
}

} // namespace ingot::cpu
