//===- TensorIndexKernels.cpp - gather/scatter by index, topk -------------===//
#include "cpu/TensorKernels.h"

#include <numeric>

namespace ingot::cpu {
namespace {

Status gatherElementsKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::I64, DType::I32}); !s)
    return s;
  const KernelInput &data = ctx.input(0), &idx = ctx.input(1);
  if (Status s = ctx.expectOutputDType(0, {data.dtype}); !s)
    return s;
  int64_t axisAttr, axis;
  if (Status s = ctx.attrInt("axis", &axisAttr, 0); !s)
    return s;
  const int64_t rank = data.shape.size();
  if (int64_t(idx.shape.size()) != rank ||
      !shape::normalizeAxis(axisAttr, rank, &axis))
    return ctx.error("indices must have the data's rank and axis in range");
  if (Status s = ctx.setOutputShape(0, idx.shape); !s)
    return s;
  const int64_t total = idx.numElements(), dim = data.shape[axis];
  if (total == 0)
    return Status::ok();
  std::vector<int64_t> st = stridesOf(data.shape);
  Status bad = Status::ok();
  dispatchBySize(dtypeSize(data.dtype), [&]<typename T>() {
    const T *src = data.as<T>();
    T *dst = ctx.output(0).as<T>();
    std::vector<int64_t> at(rank, 0);
    int64_t pos = 0;
    do {
      int64_t v = readInt(idx, pos);
      if (v < -dim || v >= dim) {
        bad = ctx.error("index " + std::to_string(v) +
                        " out of range for axis size " + std::to_string(dim));
        return;
      }
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d)
        off += (d == axis ? (v < 0 ? v + dim : v) : at[d]) * st[d];
      dst[pos++] = src[off];
    } while (nextIndex(at, idx.shape));
  });
  return bad;
}

/// reduction: 1 add, 2 mul, 3 max, 4 min.
template <typename T>
void combine(T *dst, const T *src, int64_t n, int reduction) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = reduction == 1   ? dst[i] + src[i]
             : reduction == 2 ? dst[i] * src[i]
             : reduction == 3 ? std::max(dst[i], src[i])
                              : std::min(dst[i], src[i]);
}

/// `reduction` as combine() numbers it (0 none), or -1; the reductions
/// take f32, i64 or i32 data.
Status scatterReduction(KernelContext &ctx, DType dtype, int *reduction) {
  std::string red;
  if (Status s = ctx.attrStr("reduction", &red, "none"); !s)
    return s;
  *reduction = red == "none"  ? 0
               : red == "add" ? 1
               : red == "mul" ? 2
               : red == "max" ? 3
               : red == "min" ? 4
                              : -1;
  if (*reduction < 0)
    return ctx.error("reduction '" + red + "' is not supported");
  if (*reduction && dtype != DType::F32 && dtype != DType::I64 &&
      dtype != DType::I32)
    return ctx.error("add/mul/max/min reductions take f32, i64 or i32");
  return Status::ok();
}

/// Writes (or combines) `n` elements of `src` over `dst`.
void scatterWrite(uint8_t *dst, const uint8_t *src, int64_t n, size_t es,
                  DType dtype, int reduction) {
  if (reduction == 0)
    std::memcpy(dst, src, n * es);
  else if (dtype == DType::F32)
    combine((float *)dst, (const float *)src, n, reduction);
  else if (dtype == DType::I64)
    combine((int64_t *)dst, (const int64_t *)src, n, reduction);
  else
    combine((int32_t *)dst, (const int32_t *)src, n, reduction);
}

/// ONNX ScatterElements: data, then each updates[i] at i with its `axis`
/// coordinate replaced by indices[i], in order (a repeated index keeps the
/// last write, as onnxruntime's does, or combines them).
Status scatterElementsKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 3, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::I64, DType::I32}); !s)
    return s;
  const KernelInput &data = ctx.input(0), &idx = ctx.input(1),
                    &upd = ctx.input(2);
  if (Status s = ctx.expectOutputDType(0, {data.dtype}); !s)
    return s;
  int reduction;
  if (Status s = scatterReduction(ctx, data.dtype, &reduction); !s)
    return s;
  int64_t axisAttr, axis;
  if (Status s = ctx.attrInt("axis", &axisAttr, 0); !s)
    return s;
  const int64_t rank = data.shape.size();
  if (int64_t(idx.shape.size()) != rank || idx.shape != upd.shape ||
      upd.dtype != data.dtype || !shape::normalizeAxis(axisAttr, rank, &axis))
    return ctx.error("indices and updates must share a shape of the data's "
                     "rank, and axis must be in range");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx.shape[d] > data.shape[d])
      return ctx.error("indices dim " + std::to_string(d) + " is " +
                       std::to_string(idx.shape[d]) + ", past the data's " +
                       std::to_string(data.shape[d]));
  if (Status s = ctx.setOutputShape(0, data.shape); !s)
    return s;
  const size_t es = dtypeSize(data.dtype);
  auto *out = static_cast<uint8_t *>(ctx.output(0).data);
  if (out != data.data && data.bytes())
    std::memmove(out, data.data, data.bytes());
  if (idx.numElements() == 0)
    return Status::ok();
  const std::vector<int64_t> st = stridesOf(data.shape);
  const auto *u = static_cast<const uint8_t *>(upd.data);
  const int64_t dim = data.shape[axis];
  std::vector<int64_t> at(rank, 0);
  int64_t pos = 0;
  do {
    const int64_t v = readInt(idx, pos);
    if (v < -dim || v >= dim)
      return ctx.error("index " + std::to_string(v) +
                       " out of range for axis size " + std::to_string(dim));
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d)
      off += (d == axis ? (v < 0 ? v + dim : v) : at[d]) * st[d];
    scatterWrite(out + off * es, u + pos * es, 1, es, data.dtype, reduction);
    ++pos;
  } while (nextIndex(at, idx.shape));
  return Status::ok();
}

Status scatterNDKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 3, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(1, {DType::I64}); !s)
    return s;
  const KernelInput &data = ctx.input(0), &idx = ctx.input(1),
                    &upd = ctx.input(2);
  if (Status s = ctx.expectOutputDType(0, {data.dtype}); !s)
    return s;
  int reduction;
  if (Status s = scatterReduction(ctx, data.dtype, &reduction); !s)
    return s;
  if (idx.shape.empty())
    return ctx.error("indices must have rank >= 1");
  const int64_t k = idx.shape.back(), rank = data.shape.size();
  if (k > rank)
    return ctx.error("index tuples longer than the data rank");
  const int64_t tuples = dimProduct(idx.shape, 0, idx.shape.size() - 1);
  const int64_t slice = dimProduct(data.shape, k, rank);
  if (upd.dtype != data.dtype || upd.numElements() != tuples * slice)
    return ctx.error("updates must have shape indices[:-1] + data[k:]");
  if (Status s = ctx.setOutputShape(0, data.shape); !s)
    return s;
  const size_t es = dtypeSize(data.dtype);
  auto *out = static_cast<uint8_t *>(ctx.output(0).data);
  if (out != data.data && data.bytes())
    std::memmove(out, data.data, data.bytes());
  std::vector<int64_t> st = stridesOf(data.shape);
  const auto *u = static_cast<const uint8_t *>(upd.data);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = idx.as<int64_t>()[t * k + j], dim = data.shape[j];
      if (v < -dim || v >= dim)
        return ctx.error("index " + std::to_string(v) + " out of range");
      off += (v < 0 ? v + dim : v) * st[j];
    }
    scatterWrite(out + off * es, u + t * slice * es, slice, es, data.dtype,
                 reduction);
  }
  return Status::ok();
}

template <typename T>
void topkLines(KernelContext &ctx, int64_t outer, int64_t dim, int64_t inner,
               int64_t k, bool largest, bool indices) {
  const T *src = ctx.input(0).as<T>();
  ctx.parallelFor(outer * inner, 16, [&](int64_t b, int64_t e) {
    std::vector<int64_t> order(dim);
    for (int64_t line = b; line < e; ++line) {
      int64_t o = line / inner, in = line % inner;
      const T *base = src + o * dim * inner + in;
      std::iota(order.begin(), order.end(), 0);
      // Lower index first among equal values, as onnxruntime orders them.
      auto before = [&](int64_t x, int64_t y) {
        T vx = base[x * inner], vy = base[y * inner];
        if (vx != vy)
          return largest ? vx > vy : vx < vy;
        return x < y;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = (o * k + j) * inner + in;
        if (indices)
          ctx.output(0).as<int64_t>()[at] = order[j];
        else
          ctx.output(0).as<T>()[at] = base[order[j] * inner];
      }
    }
  });
}

Status topkKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectInputDType(0, {DType::F32, DType::I64, DType::I32});
      !s)
    return s;
  int64_t axisAttr, axis, largest, select;
  if (Status s = ctx.attrInt("axis", &axisAttr, -1); !s)
    return s;
  if (Status s = ctx.attrInt("largest", &largest, 1); !s)
    return s;
  if (Status s = ctx.attrInt("select", &select, 0); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {select ? DType::I64 : x.dtype}); !s)
    return s;
  std::vector<int64_t> kv;
  if (Status s = readIndexVector(ctx, 1, &kv); !s)
    return s;
  if (!shape::normalizeAxis(axisAttr, x.shape.size(), &axis))
    return ctx.error("axis out of range");
  if (kv.size() != 1 || kv[0] < 0 || kv[0] > x.shape[axis])
    return ctx.error("k must be one value in [0, " +
                     std::to_string(x.shape[axis]) + "]");
  shape::Shape out = x.shape;
  out[axis] = kv[0];
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  int64_t outer = dimProduct(x.shape, 0, axis), dim = x.shape[axis];
  int64_t inner = dimProduct(x.shape, axis + 1, x.shape.size());
  if (x.dtype == DType::F32)
    topkLines<float>(ctx, outer, dim, inner, kv[0], largest, select);
  else if (x.dtype == DType::I64)
    topkLines<int64_t>(ctx, outer, dim, inner, kv[0], largest, select);
  else
    topkLines<int32_t>(ctx, outer, dim, inner, kv[0], largest, select);
  return Status::ok();
}

} // namespace

void addTensorIndexKernels(std::vector<KernelImpl> &table) {
  table.push_back({"gather_elements", gatherElementsKernel});
  table.push_back({"scatter_nd", scatterNDKernel});
  table.push_back({"scatter_elements", scatterElementsKernel});
  table.push_back({"topk", topkKernel});
}

} // namespace ingot::cpu
