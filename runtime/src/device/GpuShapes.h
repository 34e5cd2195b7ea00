//===- GpuShapes.h - Output shapes of the steps a GPU runs ------*- C++ -*-===//
//
// The CPU kernels set their outputs' shapes as they run; a GPU kernel
// cannot, so the GPU executor works them out on the host before each launch
// from the inputs' shapes, with the same rules (format/ShapeRules.h where
// one exists). Only kernels a GPU target can hold have a rule here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/ShapeRules.h"
#include "ingot/Status.h"

#include <vector>

namespace ingot::gpu {

/// Bytes of a dense tensor of shape `s` and dtype `t`.
uint64_t byteSize(const shape::Shape &s, DType t);

/// Whether `kernel` has a rule here.
bool hasGpuShapeRule(const std::string &kernel);

/// The shapes of `step`'s outputs given its inputs' (`inputs` per step
/// input; an absent optional has an empty shape). Checks each against the
/// output buffer's compiled bound.
Status gpuOutputShapes(const Manifest &m, const Step &step,
                       const std::vector<shape::Shape> &inputs,
                       std::vector<shape::Shape> *outputs);

} // namespace ingot::gpu
