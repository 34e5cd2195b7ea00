//===- ShapeRules.h - Output-shape rules shared by compiler and runtime ---===//
//
// One definition of how each op's output shape follows from its inputs, used
// by the runtime kernels (all dims known) and by the compiler's shape
// propagation (dims may be kDynamic). With kDynamic inputs a rule returns the
// most precise result it can, using kDynamic for unknown output dims.
// Every rule returns false and sets *error (no trailing period) on inputs
// that the ONNX spec rejects.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::shape {

constexpr int64_t kDynamic = -1;
using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &s);  // kDynamic if any dim is dynamic
std::string toString(const Shape &s); // "[2,?,64]"
/// Maps a possibly negative axis into [0, rank); false if out of range.
bool normalizeAxis(int64_t axis, int64_t rank, int64_t *out);

/// Multidirectional (numpy) broadcasting of any number of shapes.
bool broadcast(const std::vector<Shape> &ins, Shape *out, std::string *error);
/// numpy matmul, including 1-D promotion and batch broadcasting.
bool matmul(const Shape &a, const Shape &b, Shape *out, std::string *error);
/// Gemm: 2-D A and B with optional transposes; C must broadcast to (M, N).
bool gemm(const Shape &a, const Shape &b, const Shape *c, bool transA,
          bool transB, Shape *out, std::string *error);
/// Empty perm means reversed axes.
bool transpose(const Shape &in, const std::vector<int64_t> &perm, Shape *out,
               std::string *error);
/// `target` holds the shape tensor's values (0 copies a dim unless allowZero,
/// one -1 is inferred).
bool reshape(const Shape &in, const std::vector<int64_t> &target,
             bool allowZero, Shape *out, std::string *error);
/// Empty axes squeezes every static 1 (and is an error on dynamic dims).
bool squeeze(const Shape &in, const std::vector<int64_t> &axes, Shape *out,
             std::string *error);
bool unsqueeze(const Shape &in, const std::vector<int64_t> &axes, Shape *out,
               std::string *error);
bool concat(const std::vector<Shape> &ins, int64_t axis, Shape *out,
            std::string *error);
bool gather(const Shape &data, const Shape &indices, int64_t axis, Shape *out,
            std::string *error);
/// Empty axes reduces all axes.
bool reduce(const Shape &in, const std::vector<int64_t> &axes, bool keepDims,
            Shape *out, std::string *error);
/// The [begin, end) range of dims the Shape op returns, ONNX clamping rules.
void shapeOpRange(int64_t rank, int64_t start, int64_t end, int64_t *begin,
                  int64_t *endOut);

} // namespace ingot::shape
