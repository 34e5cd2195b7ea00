//===- NonMaxSuppression.cpp - Greedy IoU suppression of boxes ------------===//
//
// non_max_suppression (docs/kernels-tensor.md): per batch and class, the
// candidate boxes (score above score_threshold when one is set) are taken
// by descending score, equal scores by ascending box index, and a box is
// kept unless its IoU with a box already kept for that class exceeds
// iou_threshold. That order, the strict comparisons and the IoU of boxes
// that do not overlap (0, without dividing) are onnxruntime's, so the
// selected rows are the same. Rows are emitted batch by batch, class by
// class, in selection order.
//
//===----------------------------------------------------------------------===//
#include "cpu/TensorKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ingot::cpu {
namespace {

/// A box as its x and y extents, lower bound first.
struct Extent {
  float xMin, xMax, yMin, yMax;
};

/// `b` points at 4 floats: [y1, x1, y2, x2] with the corners in either
/// order (centered == false), or [x centre, y centre, width, height].
Extent extentOf(const float *b, bool centered) {
  if (centered) {
    const float halfW = b[2] / 2, halfH = b[3] / 2;
    return {b[0] - halfW, b[0] + halfW, b[1] - halfH, b[1] + halfH};
  }
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]),
          std::max(b[0], b[2])};
}

/// Whether the IoU of `a` and `b` is above `threshold`; boxes that do not
/// overlap, or have no area, never suppress each other.
bool suppresses(const Extent &a, const Extent &b, float threshold) {
  const float x0 = std::max(a.xMin, b.xMin), x1 = std::min(a.xMax, b.xMax);
  if (x1 <= x0)
    return false;
  const float y0 = std::max(a.yMin, b.yMin), y1 = std::min(a.yMax, b.yMax);
  if (y1 <= y0)
    return false;
  const float inter = (x1 - x0) * (y1 - y0);
  const float areaA = (a.xMax - a.xMin) * (a.yMax - a.yMin);
  const float areaB = (b.xMax - b.xMin) * (b.yMax - b.yMin);
  const float uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > threshold;
}

struct NmsParams {
  bool centered = false;
  int64_t maxPerClass = 0;
  float iou = 0;
  bool hasScoreThreshold = false;
  float scoreThreshold = 0;
};

/// The scalars given as inputs 2-4 (known only at run time) in place of
/// their attributes: a negative maximum selects nothing (onnxruntime reads
/// it so), an IoU threshold outside [0, 1] is refused.
Status readRunTimeParams(KernelContext &ctx, NmsParams *p) {
  const char *names[] = {"max_output_boxes_per_class", "iou_threshold",
                         "score_threshold"};
  for (size_t i = 2; i < 5; ++i) {
    if (!ctx.hasInput(i))
      continue;
    const KernelInput &in = ctx.input(i);
    const DType want = i == 2 ? DType::I64 : DType::F32;
    if (Status s = ctx.expectInputDType(i, {want}); !s)
      return s;
    if (shape::numElements(in.shape) != 1)
      return ctx.error(std::string(names[i - 2]) +
                       " must be one element, got " +
                       shape::toString(in.shape));
  }
  if (ctx.hasInput(2))
    p->maxPerClass = std::max<int64_t>(ctx.input(2).as<int64_t>()[0], 0);
  if (ctx.hasInput(3)) {
    p->iou = ctx.input(3).as<float>()[0];
    if (!(p->iou >= 0 && p->iou <= 1))
      return ctx.error("iou_threshold must be in [0, 1], got " +
                       std::to_string(p->iou));
  }
  if (ctx.hasInput(4)) {
    p->hasScoreThreshold = true;
    p->scoreThreshold = ctx.input(4).as<float>()[0];
  }
  return Status::ok();
}

Status readNmsParams(KernelContext &ctx, NmsParams *p) {
  int64_t centered = 0;
  double iou = 0, score = 0;
  if (Status s = ctx.attrInt("center_point_box", &centered); !s)
    return s;
  if (Status s = ctx.attrInt("max_output_boxes_per_class", &p->maxPerClass); !s)
    return s;
  if (Status s = ctx.attrFloat("iou_threshold", &iou); !s)
    return s;
  if (centered != 0 && centered != 1)
    return ctx.error("center_point_box must be 0 or 1, got " +
                     std::to_string(centered));
  if (p->maxPerClass < 0 || !(iou >= 0 && iou <= 1))
    return ctx.error("max_output_boxes_per_class must be >= 0 and "
                     "iou_threshold in [0, 1]");
  p->hasScoreThreshold = ctx.findAttr("score_threshold") != nullptr;
  if (p->hasScoreThreshold)
    if (Status s = ctx.attrFloat("score_threshold", &score); !s)
      return s;
  p->centered = centered == 1;
  p->iou = float(iou);
  p->scoreThreshold = float(score);
  return readRunTimeParams(ctx, p);
}

/// The boxes of one batch and class kept, in selection order.
void selectClass(const float *boxes, const float *scores, int64_t n,
                 const NmsParams &p, std::vector<int64_t> &order,
                 std::vector<int64_t> &kept) {
  order.clear();
  kept.clear();
  for (int64_t i = 0; i < n; ++i)
    if (!p.hasScoreThreshold || scores[i] > p.scoreThreshold)
      order.push_back(i);
  // A NaN score (kept only without a threshold) sorts as -inf, so the
  // order stays a strict weak one.
  auto key = [&](int64_t i) {
    return std::isnan(scores[i]) ? -std::numeric_limits<float>::infinity()
                                 : scores[i];
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key(a) > key(b); });
  for (int64_t i : order) {
    if (int64_t(kept.size()) >= p.maxPerClass)
      break;
    const Extent e = extentOf(boxes + 4 * i, p.centered);
    bool keep = true;
    for (int64_t j : kept)
      if (suppresses(extentOf(boxes + 4 * j, p.centered), e, p.iou)) {
        keep = false;
        break;
      }
    if (keep)
      kept.push_back(i);
  }
}

Status nonMaxSuppressionKernel(KernelContext &ctx) {
  if (Status s = ctx.expectArity(2, 5, 1); !s)
    return s;
  for (size_t i = 0; i < 2; ++i)
    if (Status s = ctx.expectInputDType(i, {DType::F32}); !s)
      return s;
  if (Status s = ctx.expectOutputDType(0, {DType::I64}); !s)
    return s;
  NmsParams p;
  if (Status s = readNmsParams(ctx, &p); !s)
    return s;
  const KernelInput &boxes = ctx.input(0), &scores = ctx.input(1);
  if (boxes.shape.size() != 3 || boxes.shape[2] != 4 ||
      scores.shape.size() != 3 || boxes.shape[0] != scores.shape[0] ||
      boxes.shape[1] != scores.shape[2])
    return ctx.error("boxes must be [B, N, 4] and scores [B, C, N], got " +
                     shape::toString(boxes.shape) + " and " +
                     shape::toString(scores.shape));
  const int64_t batches = scores.shape[0], classes = scores.shape[1];
  const int64_t n = scores.shape[2];
  std::vector<int64_t> rows, order, kept;
  for (int64_t b = 0; b < batches && p.maxPerClass > 0; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      selectClass(boxes.as<float>() + b * n * 4,
                  scores.as<float>() + (b * classes + c) * n, n, p, order,
                  kept);
      for (int64_t i : kept)
        rows.insert(rows.end(), {b, c, i});
    }
  const int64_t count = int64_t(rows.size()) / 3;
  if (Status s = ctx.setOutputShape(0, {count, 3}); !s)
    return s;
  if (count)
    std::copy(rows.begin(), rows.end(), ctx.output(0).as<int64_t>());
  return Status::ok();
}

} // namespace

void addNonMaxSuppressionKernels(std::vector<KernelImpl> &table) {
  table.push_back({"non_max_suppression", nonMaxSuppressionKernel});
}

} // namespace ingot::cpu
