//===- OnnxGraphChecks.h - Structural checks of an ONNX graph ---*- C++ -*-===//
//
// Private to the ONNX importer: what onnx.checker and onnxruntime refuse
// about a model as a whole (its IR version, names defined twice, outputs
// that are missing or declared with another type than computed), checked
// before or after the nodes are converted, and the order nodes are
// converted in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include "mlir/IR/Value.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::compiler::onnximport {

/// The IR versions accepted: 3 is the first released one (IR 1 and 2
/// predate opset_import); 14 is that of onnx 1.23 and the newest onnxruntime
/// 1.32 loads.
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 14;

/// Reads the ModelProto; any failure is "not a valid ONNX model".
Status parseModel(const std::string &path, onnx::ModelProto &model);
/// Fails unless the model's ir_version is in kMinIrVersion..kMaxIrVersion.
Status checkIrVersion(const std::string &path, const onnx::ModelProto &model);

/// Fails if the graph declares no outputs, or defines a name twice (two
/// graph inputs, two initializers, two node outputs, or a node output that
/// is also a graph input or initializer), or if a graph input that is also
/// an initializer declares another dtype or dims than the initializer has.
Status checkGraphNames(const std::string &path, const onnx::GraphProto &graph);

/// The names `node` reads: its inputs and the outer names its subgraphs
/// (If branches) read, which must be computed before it too.
std::vector<std::string> namesRead(const onnx::NodeProto &node);

/// The nodes in an order where every node comes after the producers of its
/// inputs (file order where the file allows); fails on a cycle.
Status topologicalOrder(const std::string &path, const onnx::GraphProto &g,
                        std::vector<int> &order);

/// Fails if graph output `out` declares a dtype other than `value`'s, another
/// rank, or a fixed dim that `value`'s static dim contradicts.
Status checkDeclaredOutput(const std::string &path,
                           const onnx::ValueInfoProto &out, mlir::Value value);

} // namespace ingot::compiler::onnximport
