//===- Rope.cpp - Rotary position embedding (rotate-half) -----------------===//
//
// The arithmetic (frequencies, double-precision angles, the rotation) lives
// in RopeMath.h, shared with rope_paged_attention so that the fused kernel
// gives the same bits. The per-token cos/sin tables are shared by all heads
// of the token. A pair (i, i + half) is read before either element is
// written, so the kernel works in place.
//
//===----------------------------------------------------------------------===//

#include "cpu/KernelUtil.h"
#include "cpu/RopeMath.h"

#include <cmath>

namespace ingot::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

} // namespace

Status readRopeParams(const KernelContext &ctx, RopeParams *p) {
  if (Status s = ctx.attrInt("num_heads", &p->heads); !s)
    return s;
  if (Status s = ctx.attrInt("head_dim", &p->headDim); !s)
    return s;
  if (Status s = ctx.attrInt("rotary_dim", &p->rotaryDim, p->headDim); !s)
    return s;
  if (Status s = ctx.attrFloat("theta", &p->theta, 10000.0); !s)
    return s;
  if (Status s = ctx.attrStr("scaling", &p->scaling, std::string("none")); !s)
    return s;
  if (Status s = ctx.attrFloat("factor", &p->factor, 8.0); !s)
    return s;
  if (Status s = ctx.attrFloat("low_freq_factor", &p->lowFreqFactor, 1.0); !s)
    return s;
  if (Status s = ctx.attrFloat("high_freq_factor", &p->highFreqFactor, 4.0); !s)
    return s;
  if (Status s =
          ctx.attrInt("original_max_positions", &p->originalMax, int64_t(8192));
      !s)
    return s;
  if (p->heads <= 0 || p->headDim <= 0)
    return ctx.error("num_heads and head_dim must be positive, got " +
                     std::to_string(p->heads) + " and " +
                     std::to_string(p->headDim));
  if (p->rotaryDim <= 0 || p->rotaryDim > p->headDim || p->rotaryDim % 2)
    return ctx.error("rotary_dim must be even and in (0, head_dim = " +
                     std::to_string(p->headDim) + "], got " +
                     std::to_string(p->rotaryDim));
  if (!(p->theta > 0))
    return ctx.error("theta must be positive");
  if (p->scaling != "none" && p->scaling != "llama3" &&
      p->scaling != "linear")
    return ctx.error("scaling must be \"none\", \"linear\" or \"llama3\", "
                     "got \"" +
                     p->scaling + "\"");
  if (p->scaling == "linear" && !(p->factor > 0))
    return ctx.error("linear scaling needs factor > 0");
  if (p->scaling == "llama3" &&
      (!(p->factor > 0) || !(p->highFreqFactor > p->lowFreqFactor) ||
       !(p->lowFreqFactor > 0) || p->originalMax <= 0))
    return ctx.error("llama3 scaling needs factor > 0, high_freq_factor > "
                     "low_freq_factor > 0 and original_max_positions > 0");
  return Status::ok();
}

std::vector<double> ropeInverseFrequencies(const RopeParams &p) {
  const int64_t half = p.rotaryDim / 2;
  std::vector<double> inv(half);
  for (int64_t i = 0; i < half; ++i) {
    double f = std::pow(p.theta, -2.0 * double(i) / double(p.rotaryDim));
    if (p.scaling == "linear")
      f /= p.factor;
    if (p.scaling == "llama3") {
      // Long wavelengths are slowed by `factor`, short ones kept, and the
      // band in between interpolated (Llama 3.1).
      const double wavelen = 2.0 * kPi / f;
      const double om = double(p.originalMax);
      if (wavelen > om / p.lowFreqFactor) {
        f /= p.factor;
      } else if (wavelen >= om / p.highFreqFactor) {
        const double smooth = (om / wavelen - p.lowFreqFactor) /
                              (p.highFreqFactor - p.lowFreqFactor);
        f = (1.0 - smooth) * f / p.factor + smooth * f;
      }
    }
    inv[i] = f;
  }
  return inv;
}

namespace {

Status ropeKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 2, 1); !s)
    return s;
  if (Status s = ctx.expectInputDType(0, {DType::F32}); !s)
    return s;
  if (Status s = ctx.expectOutputDType(0, {DType::F32}); !s)
    return s;
  RopeParams p;
  if (Status s = readRopeParams(ctx, &p); !s)
    return s;
  std::vector<int64_t> positions;
  if (Status s = readIndexVector(ctx, 1, &positions); !s)
    return s;
  const KernelInput &xin = ctx.input(0);
  const int64_t t = int64_t(positions.size());
  const int64_t rowLen = p.heads * p.headDim;
  if (xin.shape.empty() || xin.shape[0] != t || xin.numElements() != t * rowLen)
    return ctx.error("x " + shape::toString(xin.shape) + " must be [" +
                     std::to_string(t) + ", " + std::to_string(p.heads) + "*" +
                     std::to_string(p.headDim) + "] for positions of length " +
                     std::to_string(t));
  if (Status s = ctx.setOutputShape(0, xin.shape); !s)
    return s;
  KernelOutput &o = ctx.output(0);
  std::vector<uint8_t> scratch;
  const auto *x = static_cast<const float *>(
      detachIfAliased(xin, o.data, xin.bytes(), o.shape, o.dtype, scratch));
  float *y = o.as<float>();
  const std::vector<double> inv = ropeInverseFrequencies(p);
  const int64_t half = p.rotaryDim / 2, d = p.headDim;
  const int64_t grain =
      std::max<int64_t>(1, 8192 / std::max<int64_t>(rowLen, 1));
  ctx.parallelFor(t, grain, [&](int64_t b, int64_t e) {
    std::vector<float> cosv(half), sinv(half);
    for (int64_t tok = b; tok < e; ++tok) {
      ropeAngles(positions[tok], inv.data(), half, cosv.data(), sinv.data());
      for (int64_t h = 0; h < p.heads; ++h)
        ropeRotateHead(x + tok * rowLen + h * d, y + tok * rowLen + h * d,
                       cosv.data(), sinv.data(), p.rotaryDim, d);
    }
  });
  return Status::ok();
}

} // namespace

void addRopeKernels(std::vector<KernelImpl> &table) {
  table.push_back({"rope", ropeKernel});
}

} // namespace ingot::cpu
