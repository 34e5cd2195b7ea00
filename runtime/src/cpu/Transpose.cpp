//===- Transpose.cpp - transpose ------------------------------------------===//
//
// Output dims that stay adjacent in the input are merged and size-1 dims
// dropped first, so e.g. [B,S,H,D] -> [B,H,S,D] becomes a copy of D-long
// rows. When the innermost output dim is strided in the input, the copy
// runs in 32 x 32 tiles between that dim and the input's innermost one, so
// both reads and writes stay within a few cache lines.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"

namespace ingot::cpu {
namespace {

constexpr int64_t kTile = 32;

struct TransposePlan {
  std::vector<int64_t> dims; // merged output dims
  std::vector<int64_t> src;  // input element stride of each
  std::vector<int64_t> dst;  // output element stride of each
};

TransposePlan planTranspose(const shape::Shape &in,
                            const std::vector<int64_t> &perm) {
  const size_t rank = in.size();
  std::vector<int64_t> inStride(rank, 1);
  for (size_t i = rank; i-- > 1;)
    inStride[i - 1] = inStride[i] * in[i];
  TransposePlan p;
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = in[perm[i]], s = inStride[perm[i]];
    if (d == 1)
      continue;
    if (!p.dims.empty() && p.src.back() == s * d) {
      p.dims.back() *= d;
      p.src.back() = s;
      continue;
    }
    p.dims.push_back(d);
    p.src.push_back(s);
  }
  p.dst.assign(p.dims.size(), 1);
  for (size_t i = p.dims.size(); i-- > 1;)
    p.dst[i - 1] = p.dst[i] * p.dims[i];
  return p;
}

/// Element offsets (input, output) of a flat index over `dims` restricted
/// to the positions in `which`.
void offsetsOf(const TransposePlan &p, const std::vector<int> &which,
               int64_t flat, int64_t *srcOff, int64_t *dstOff) {
  int64_t s = 0, d = 0;
  for (size_t w = which.size(); w-- > 0;) {
    int i = which[w];
    int64_t idx = flat % p.dims[i];
    flat /= p.dims[i];
    s += idx * p.src[i];
    d += idx * p.dst[i];
  }
  *srcOff = s;
  *dstOff = d;
}

template <typename T>
void runTranspose(const KernelContext &ctx, const TransposePlan &p, const T *in,
                  T *out) {
  const int r = p.dims.size();
  const int last = r - 1;
  if (p.src[last] == 1) { // rows of the innermost dim are contiguous
    const int64_t row = p.dims[last];
    std::vector<int> outerDims;
    int64_t rows = 1;
    for (int i = 0; i < last; ++i) {
      outerDims.push_back(i);
      rows *= p.dims[i];
    }
    ctx.parallelFor(rows, std::max<int64_t>(1, kElementwiseGrain / row),
                    [&](int64_t b, int64_t e) {
                      for (int64_t i = b; i < e; ++i) {
                        int64_t so, dof;
                        offsetsOf(p, outerDims, i, &so, &dof);
                        std::memcpy(out + dof, in + so, row * sizeof(T));
                      }
                    });
    return;
  }
  int q = 0; // the output dim that is the input's innermost
  while (p.src[q] != 1)
    ++q;
  std::vector<int> others;
  int64_t outerCount = 1;
  for (int i = 0; i < r; ++i)
    if (i != q && i != last) {
      others.push_back(i);
      outerCount *= p.dims[i];
    }
  const int64_t qTiles = (p.dims[q] + kTile - 1) / kTile;
  const int64_t lTiles = (p.dims[last] + kTile - 1) / kTile;
  const int64_t ls = p.src[last], qd = p.dst[q];
  ctx.parallelFor(outerCount * qTiles * lTiles,
                  std::max<int64_t>(1, kElementwiseGrain / (kTile * kTile)),
                  [&](int64_t b, int64_t e) {
                    for (int64_t t = b; t < e; ++t) {
                      const int64_t lt = t % lTiles, qt = (t / lTiles) % qTiles;
                      int64_t so, dof;
                      offsetsOf(p, others, t / (lTiles * qTiles), &so, &dof);
                      const int64_t q0 = qt * kTile,
                                    q1 = std::min(p.dims[q], q0 + kTile);
                      const int64_t l0 = lt * kTile,
                                    l1 = std::min(p.dims[last], l0 + kTile);
                      for (int64_t qi = q0; qi < q1; ++qi) {
                        const T *s = in + so + qi;
                        T *d = out + dof + qi * qd;
                        for (int64_t li = l0; li < l1; ++li)
                          d[li] = s[li * ls];
                      }
                    }
                  });
}

Status transposeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(1, 1, 1); !s)
    return s;
  const KernelInput &x = ctx.input(0);
  if (Status s = ctx.expectOutputDType(0, {x.dtype}); !s)
    return s;
  std::vector<int64_t> perm;
  if (Status s = ctx.attrInts("perm", &perm, std::vector<int64_t>{}); !s)
    return s;
  shape::Shape outShape;
  std::string err;
  if (!shape::transpose(x.shape, perm, &outShape, &err))
    return ctx.error(err);
  if (Status s = ctx.setOutputShape(0, outShape); !s)
    return s;
  if (perm.empty())
    for (int64_t i = x.shape.size(); i-- > 0;)
      perm.push_back(i);
  const int64_t total = x.numElements();
  if (total == 0)
    return Status::ok();
  KernelOutput &o = ctx.output(0);
  std::vector<uint8_t> scratch;
  const void *in = x.data;
  if (rangesOverlap(in, x.bytes(), o.data, x.bytes())) { // defensive
    scratch.assign(x.as<uint8_t>(), x.as<uint8_t>() + x.bytes());
    in = scratch.data();
  }
  TransposePlan p = planTranspose(x.shape, perm);
  if (p.dims.size() <= 1) { // pure copy (all other dims are size 1)
    std::memcpy(o.data, in, x.bytes());
    return Status::ok();
  }
  dispatchBySize(dtypeSize(x.dtype), [&]<typename T>() {
    runTranspose<T>(ctx, p, static_cast<const T *>(in), o.as<T>());
  });
  return Status::ok();
}

} // namespace

void addTransposeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"transpose", transposeKernel});
}

} // namespace ingot::cpu
