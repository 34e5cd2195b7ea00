//===- KernelTestUtil.h - Running CPU kernels directly in tests -*- C++ -*-===//
//
// Tensors, random data, a kernel runner that builds a KernelContext by hand
// (optionally with the output placed over an input, as the memory planner
// does for in-place kernels), naive index helpers for references written in
// double precision, and a relative-error comparison.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu/KernelRegistry.h"
#include "ingot/Executor.h"
#include "ingot/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace ingot::test {

using shape::Shape;
using Tensor = HostTensor;

inline int64_t count(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

template <typename T> T *ptr(Tensor &t) {
  return reinterpret_cast<T *>(t.data.data());
}
template <typename T> const T *ptr(const Tensor &t) {
  return reinterpret_cast<const T *>(t.data.data());
}

template <typename T>
Tensor make(DType dtype, Shape s, const std::vector<T> &v) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(s);
  t.data.resize(v.size() * sizeof(T));
  if (!v.empty())
    std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}
inline Tensor f32(Shape s, const std::vector<float> &v) {
  return make(DType::F32, s, v);
}
inline Tensor i64(Shape s, const std::vector<int64_t> &v) {
  return make(DType::I64, s, v);
}
inline Tensor i32(Shape s, const std::vector<int32_t> &v) {
  return make(DType::I32, s, v);
}

/// n values from N(0, scale^2), the same for the same seed (std::mt19937).
inline std::vector<float> normalValues(size_t n, uint32_t seed,
                                       float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Fixed-seed generator; each test makes its own so tests stay independent.
struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  Tensor uniform(Shape s, double lo = -1.0, double hi = 1.0) {
    std::uniform_real_distribution<float> d{float(lo), float(hi)};
    std::vector<float> v(count(s));
    for (float &x : v)
      x = d(gen);
    return f32(std::move(s), v);
  }
  template <typename T> Tensor ints(DType dt, Shape s, int64_t lo, int64_t hi) {
    std::uniform_int_distribution<int64_t> d(lo, hi);
    std::vector<T> v(count(s));
    for (T &x : v)
      x = T(d(gen));
    return make(dt, std::move(s), v);
  }
  Tensor bools(Shape s) {
    std::vector<uint8_t> v(count(s));
    for (uint8_t &x : v)
      x = gen() & 1;
    return make(DType::Bool, std::move(s), v);
  }
};

inline Attr intAttr(const std::string &n, int64_t v) {
  Attr a;
  a.name = n;
  a.kind = Attr::Kind::Int;
  a.i = v;
  return a;
}
inline Attr floatAttr(const std::string &n, double v) {
  Attr a;
  a.name = n;
  a.kind = Attr::Kind::Float;
  a.f = v;
  return a;
}
inline Attr intsAttr(const std::string &n, std::vector<int64_t> v) {
  Attr a;
  a.name = n;
  a.kind = Attr::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attr strAttr(const std::string &n, const std::string &v) {
  Attr a;
  a.name = n;
  a.kind = Attr::Kind::Str;
  a.s = v;
  return a;
}

/// A shared pool with more threads than this machine may have cores, so the
/// parallel paths really interleave.
inline ThreadPool &testPool() {
  static ThreadPool pool(4);
  return pool;
}

struct Call {
  Call(std::string kernel, std::vector<const Tensor *> inputs,
       std::vector<Attr> attrs = {},
       std::vector<DType> outDTypes = {DType::F32})
      : kernel(std::move(kernel)), inputs(std::move(inputs)),
        attrs(std::move(attrs)), outDTypes(std::move(outDTypes)) {}
  std::string kernel;
  std::vector<const Tensor *> inputs; // nullptr: absent optional
  std::vector<Attr> attrs;
  std::vector<DType> outDTypes;
  /// Output capacity in bytes; the default fits every output in the tests.
  int64_t capacity = int64_t(4) << 20;
  ThreadPool *pool = &testPool();
  /// When >= 0, output 0 is placed in memory that starts with a copy of
  /// this input (the kernel then reads the input from that memory), as an
  /// in-place plan does.
  int aliasInput = -1;
  /// Per input: values per block of a quantised weight (Quant.h), 0 else.
  std::vector<int64_t> groupSizes;
  /// Per input: whether it is a weight (KernelInput::constant).
  std::vector<bool> constants;
  /// Per input: a weight's stored layout (WeightLayout.h); "" row-major.
  std::vector<std::string> layouts;
  /// The step's cache of what the kernel derives from weights, or none.
  cpu::StepCache *stepCache = nullptr;
};

/// Runs a kernel; outputs get their runtime shapes and bytes.
inline Status runKernel(const Call &c, std::vector<Tensor> *outs) {
  const cpu::KernelInfo *k = cpu::findKernel(c.kernel);
  if (!k)
    return Status::error("no kernel " + c.kernel);
  cpu::KernelContext ctx(c.kernel, "test/" + c.kernel, &c.attrs, c.pool);
  ctx.setStepCache(c.stepCache);
  std::vector<std::vector<uint8_t>> storage(c.outDTypes.size());
  for (size_t i = 0; i < c.outDTypes.size(); ++i)
    storage[i].assign(size_t(std::max<int64_t>(c.capacity, 64)), 0xAB);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    cpu::KernelInput in;
    if (c.inputs[i]) {
      in.present = true;
      in.data = c.inputs[i]->data.data();
      in.dtype = c.inputs[i]->dtype;
      in.shape = c.inputs[i]->shape;
      in.name = "in" + std::to_string(i);
      if (i < c.groupSizes.size())
        in.groupSize = c.groupSizes[i];
      in.constant = i < c.constants.size() && c.constants[i];
      if (i < c.layouts.size() && !c.layouts[i].empty())
        in.layout = c.layouts[i];
    }
    ctx.inputs.push_back(in);
  }
  if (c.aliasInput >= 0) {
    const Tensor &src = *c.inputs[c.aliasInput];
    std::memcpy(storage[0].data(), src.data.data(), src.data.size());
    ctx.inputs[c.aliasInput].data = storage[0].data();
  }
  for (size_t i = 0; i < c.outDTypes.size(); ++i) {
    cpu::KernelOutput o;
    o.data = storage[i].data();
    o.dtype = c.outDTypes[i];
    o.capacityBytes = c.capacity;
    o.maxShape = {c.capacity / int64_t(dtypeSize(c.outDTypes[i]))};
    o.name = "out" + std::to_string(i);
    ctx.outputs.push_back(o);
  }
  Status s = k->fn(ctx);
  if (!s)
    return s;
  outs->clear();
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!ctx.outputs[i].shapeSet)
      return Status::error("output shape not set");
    Tensor t;
    t.dtype = c.outDTypes[i];
    t.shape = ctx.outputs[i].shape;
    t.data.assign(storage[i].begin(),
                  storage[i].begin() + count(t.shape) * dtypeSize(t.dtype));
    outs->push_back(std::move(t));
  }
  return Status::ok();
}

/// Runs and expects success; returns output 0.
inline Tensor runOk(const Call &c) {
  std::vector<Tensor> outs;
  Status s = runKernel(c, &outs);
  EXPECT_TRUE(s.isOk()) << c.kernel << ": " << s.message();
  return outs.empty() ? Tensor{} : outs[0];
}

/// Multi-index helpers for the naive references.
inline std::vector<int64_t> unravel(int64_t flat, const Shape &s) {
  std::vector<int64_t> idx(s.size());
  for (size_t i = s.size(); i-- > 0;) {
    idx[i] = flat % s[i];
    flat /= s[i];
  }
  return idx;
}
/// Flat index into `s` (right-aligned, size-1 dims broadcast) of an index
/// into a larger output.
inline int64_t broadcastIndex(const std::vector<int64_t> &idx, const Shape &s) {
  int64_t flat = 0;
  size_t off = idx.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    flat = flat * s[i] + (s[i] == 1 ? 0 : idx[off + i]);
  return flat;
}
inline Shape broadcastShape(const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// An f32 tensor's values, widened (a reference for an exact result).
inline std::vector<double> toDouble(const Tensor &t) {
  std::vector<double> v(size_t(count(t.shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = ptr<float>(t)[i];
  return v;
}

/// Each element within rtol relative (atol absolute near zero) of the
/// double reference; `scale`, when given, replaces |ref| as the magnitude
/// (e.g. sum |a||b| for a dot product, which bounds its rounding error).
inline void expectClose(const Tensor &got, const Shape &shape,
                        const std::vector<double> &ref, double rtol,
                        double atol = 1e-30,
                        const std::vector<double> *scale = nullptr) {
  ASSERT_EQ(got.dtype, DType::F32);
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(size_t(count(shape)), ref.size());
  const float *g = ptr<float>(got);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double mag = scale ? (*scale)[i] : std::fabs(ref[i]);
    double err = std::fabs(double(g[i]) - ref[i]);
    if (std::isnan(ref[i]) && std::isnan(g[i]))
      continue;
    ASSERT_LE(err, rtol * mag + atol)
        << "element " << i << ": got " << g[i] << ", want " << ref[i];
    if (mag > 0)
      worst = std::max(worst, err / mag);
  }
}

} // namespace ingot::test
