//===- TensorSliceKernels.cpp - slice and pad
//------------------------------===//
//
// Both walk the output row by row (all dims but the last) and map each
// output index to a source index per dim, so negative steps, crops and the
// three pad modes share one loop shape. Dtype-agnostic.
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorKernels.h"

namespace ingot::cpu {
namespace {

/// The slice as a walk over the fewest dims: output dims of one element
/// fold into the base offset, and a dim copied whole merges into the one
/// before it when that one steps by 1, so a [1, 512, 508, 1] crop copies
/// long runs instead of one element per row.
struct SliceWalk {
  int64_t base = 0;
  std::vector<int64_t> dims, strides; // output extents, source strides
};

SliceWalk planSliceWalk(const shape::Shape &in, const shape::Shape &out,
                        const std::vector<int64_t> &first,
                        const std::vector<int64_t> &step) {
  SliceWalk w;
  const std::vector<int64_t> inSt = stridesOf(in);
  bool prevUnitStep = false;
  for (size_t d = 0; d < out.size(); ++d) {
    w.base += first[d] * inSt[d];
    if (out[d] == 1)
      continue;
    const bool whole = step[d] == 1 && first[d] == 0 && out[d] == in[d];
    if (whole && prevUnitStep && w.strides.back() == in[d] * inSt[d]) {
      w.dims.back() *= out[d];
      w.strides.back() = inSt[d];
      continue;
    }
    w.dims.push_back(out[d]);
    w.strides.push_back(step[d] * inSt[d]);
    prevUnitStep = step[d] == 1;
  }
  if (w.dims.empty()) {
    w.dims.push_back(1);
    w.strides.push_back(1);
  }
  return w;
}

Status sliceKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(3, 5, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  const int64_t rank = x.shape.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (Status s = readIndexVector(ctx, 1, &starts); !s)
    return s;
  if (Status s = readIndexVector(ctx, 2, &ends); !s)
    return s;
  if (ctx.hasInput(3)) {
    if (Status s = readIndexVector(ctx, 3, &axes); !s)
      return s;
  } else {
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  }
  if (ctx.hasInput(4)) {
    if (Status s = readIndexVector(ctx, 4, &steps); !s)
      return s;
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.error("starts, ends, axes and steps differ in length");
  shape::Shape out = x.shape;
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t a;
    if (!shape::normalizeAxis(axes[j], rank, &a))
      return ctx.error("axis " + std::to_string(axes[j]) + " out of range");
    int64_t dim = x.shape[a], st = steps[j], b = starts[j], e = ends[j];
    if (st == 0)
      return ctx.error("step must not be 0");
    if (b < 0)
      b += dim;
    if (e < 0)
      e += dim;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out[a] = e > b ? (e - b + st - 1) / st : 0;
    } else {
      b = std::clamp<int64_t>(b, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out[a] = b > e ? (b - e - st - 1) / -st : 0;
    }
    first[a] = b;
    step[a] = st;
  }
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  if (shape::numElements(out) == 0)
    return Status::ok();
  SliceWalk walk = planSliceWalk(x.shape, out, first, step);
  dispatchBySize(dtypeSize(x.dtype), [&]<typename T>() {
    const T *src = x.as<T>() + walk.base;
    T *dst = ctx.output(0).as<T>();
    const size_t last = walk.dims.size() - 1;
    const int64_t len = walk.dims[last], lastStride = walk.strides[last];
    shape::Shape rows(walk.dims.begin(), walk.dims.end() - 1);
    std::vector<int64_t> idx(last, 0);
    do {
      int64_t off = 0;
      for (size_t d = 0; d < last; ++d)
        off += idx[d] * walk.strides[d];
      if (lastStride == 1) {
        std::copy(src + off, src + off + len, dst);
        dst += len;
      } else {
        for (int64_t i = 0; i < len; ++i)
          *dst++ = src[off + i * lastStride];
      }
    } while (nextIndex(idx, rows));
  });
  return Status::ok();
}

/// Source index of output position `o` along a dim of size `dim` with
/// `begin` and `end` pads, or -1 for the constant value. Modes: 0 constant,
/// 1 edge, 2 reflect, 3 wrap (the input repeats). Negative pads crop first,
/// as onnxruntime does: edges, reflections and wraps are of what is kept.
int64_t padSource(int64_t o, int64_t begin, int64_t end, int64_t dim,
                  int mode) {
  const int64_t lo = std::max<int64_t>(0, -begin);
  const int64_t kept = dim - lo - std::max<int64_t>(0, -end);
  int64_t i = o - begin;
  if (i >= lo && i < lo + kept)
    return i;
  if (mode == 0 || kept <= 0)
    return -1;
  if (mode == 1)
    return std::clamp<int64_t>(i, lo, lo + kept - 1);
  i -= lo;
  if (mode == 3)
    return lo + (i % kept + kept) % kept;
  if (kept == 1)
    return lo;
  int64_t period = 2 * (kept - 1);
  i %= period;
  if (i < 0)
    i += period;
  return lo + (i < kept ? i : period - i);
}

Status padKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 3, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  std::vector<int64_t> pads;
  if (Status s = readIndexVector(ctx, 1, &pads); !s)
    return s;
  std::string modeName;
  if (Status s = ctx.attrStr("mode", &modeName, "constant"); !s)
    return s;
  int mode = modeName == "constant"  ? 0
             : modeName == "edge"    ? 1
             : modeName == "reflect" ? 2
             : modeName == "wrap"    ? 3
                                     : -1;
  if (mode < 0)
    return ctx.error("mode '" + modeName + "' is not supported");
  const int64_t rank = x.shape.size();
  if (int64_t(pads.size()) != 2 * rank)
    return ctx.error("pads must have 2 * rank entries");
  if (ctx.hasInput(2) &&
      (ctx.input(2).dtype != x.dtype || ctx.input(2).numElements() != 1))
    return ctx.error("the pad value must be a scalar of the input's type");
  shape::Shape out = x.shape;
  for (int64_t d = 0; d < rank; ++d) {
    out[d] += pads[d] + pads[d + rank];
    if (out[d] < 0)
      return ctx.error("pads crop dim " + std::to_string(d) + " below zero");
    const int64_t kept = x.shape[d] - std::max<int64_t>(0, -pads[d]) -
                         std::max<int64_t>(0, -pads[d + rank]);
    if (mode != 0 && kept <= 0 && out[d] > 0)
      return ctx.error("edge/reflect/wrap padding of an empty dim (or one "
                       "its negative pads crop away)");
  }
  if (Status s = ctx.setOutputShape(0, out); !s)
    return s;
  if (shape::numElements(out) == 0)
    return Status::ok();
  std::vector<int64_t> inSt = stridesOf(x.shape);
  dispatchBySize(dtypeSize(x.dtype), [&]<typename T>() {
    const T *src = x.as<T>();
    T *dst = ctx.output(0).as<T>();
    T value{};
    if (ctx.hasInput(2))
      value = ctx.input(2).as<T>()[0];
    if (rank == 0) {
      dst[0] = src[0];
      return;
    }
    // Trailing dims without pads join the last padded one's rows: an NHWC
    // image padded along H and W copies rows of W·C values, not of C (a
    // row of one value per element took 73 us for 5k values).
    int64_t last = rank - 1, inner = 1;
    while (last > 0 && pads[last] == 0 && pads[last + rank] == 0)
      inner *= x.shape[last--];
    const int64_t len = out[last] * inner;
    std::vector<int64_t> lastSrc(len);
    for (int64_t i = 0; i < len; ++i) {
      const int64_t s = padSource(i / inner, pads[last], pads[last + rank],
                                  x.shape[last], mode);
      lastSrc[i] = s < 0 ? -1 : s * inner + i % inner;
    }
    // With constant padding a row's sources are one contiguous run.
    int64_t first = 0, end = len;
    while (first < len && lastSrc[first] < 0)
      ++first;
    while (end > first && lastSrc[end - 1] < 0)
      --end;
    shape::Shape rows(out.begin(), out.begin() + last);
    std::vector<int64_t> idx(last, 0);
    do {
      int64_t off = 0;
      bool inside = true;
      for (int64_t d = 0; d < last; ++d) {
        int64_t s =
            padSource(idx[d], pads[d], pads[d + rank], x.shape[d], mode);
        inside &= s >= 0;
        off += s * inSt[d];
      }
      if (mode == 0) {
        if (inside && first < end) {
          std::fill(dst, dst + first, value);
          std::copy_n(src + off + lastSrc[size_t(first)], end - first,
                      dst + first);
          std::fill(dst + end, dst + len, value);
        } else {
          std::fill(dst, dst + len, value);
        }
        dst += len;
        continue;
      }
      for (int64_t i = 0; i < len; ++i)
        *dst++ = inside && lastSrc[i] >= 0 ? src[off + lastSrc[i]] : value;
    } while (nextIndex(idx, rows));
  });
  return Status::ok();
}

} // namespace

void addTensorSliceKernels(std::vector<KernelImpl> &table) {
  table.push_back({"slice", sliceKernel});
  table.push_back({"pad", padKernel});
}

} // namespace ingot::cpu
