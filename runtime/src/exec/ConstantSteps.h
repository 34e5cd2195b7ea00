//===- ConstantSteps.h - Steps that compute the same bytes every run -*- C++
//-*-===//
//
// A step whose every input is a weight, or the result of such a step,
// writes the same bytes on every run: an exported graph's in-graph weight
// preparation (int8 weights cast and scaled, DequantizeLinear of a QDQ
// model's weights, a transposed weight). The executor runs those steps
// once (on the first run that reaches them: a step in an If branch may
// wait), keeps their results in memory of their own instead of the arena
// (which later steps reuse), skips them afterwards, and hands the results
// to their readers as weights (KernelInput::constant, so a GEMM packs them
// once). onnxruntime folds such subgraphs when it loads a model; here the
// artifact keeps the compact weights and the folding happens on the first
// run, at the cost of the results' memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/ShapeRules.h"

#include <cstdint>
#include <vector>

namespace ingot {

struct ConstantSteps {
  /// Per step: computed by the first run that reaches it (a step inside
  /// an If branch may first run on a later run), skipped afterwards.
  std::vector<bool> step;
  std::vector<bool> buffer; // per buffer: a weight or such a step's result
  /// Per buffer: a result that later runs read (a step that runs every
  /// time reads it, or it is a model output); the others only feed other
  /// constant steps and are freed once every constant step has run.
  std::vector<bool> keep;
  uint64_t bytes = 0; // the kept results' memory (their compiled bounds)
};

ConstantSteps findConstantSteps(const Manifest &m);

/// Which constant steps have run, and the shapes their results had: a
/// step inside an If branch first runs when a run takes its branch.
class ConstantProgress {
public:
  void reset(const Manifest &m, const ConstantSteps &c);
  bool ran(size_t step) const { return ran_[step]; }
  bool allRan() const { return pending_ == 0; }
  /// After step `s` ran: a constant step's results now stand.
  void note(const Manifest &m, const ConstantSteps &c, size_t s,
            const std::vector<shape::Shape> &shapes);
  /// Marks the standing results known, with their shapes, for a new run.
  void restore(std::vector<shape::Shape> &shapes,
               std::vector<bool> &known) const;

private:
  std::vector<bool> ran_;            // per step
  std::vector<bool> written_;        // per buffer: its constant step ran
  std::vector<shape::Shape> shapes_; // per buffer
  size_t pending_ = 0;
};

} // namespace ingot
