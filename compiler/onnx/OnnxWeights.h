//===- OnnxWeights.h - Tensor bytes of an ONNX model ------------*- C++ -*-===//
//
// Private to the ONNX importer: reads the bytes of a TensorProto from its
// raw_data, its typed fields or an external data file, and the WeightSource
// that serves `ingot.param`s from the parsed model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/WeightSource.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingot::compiler::onnximport {

/// "float32", "int64", ... for an ONNX TensorProto::DataType value.
std::string dtypeName(int32_t dataType);
/// Bytes per element as ingot stores it (bool is one byte); nullopt for the
/// dtypes ingot does not support.
std::optional<int64_t> storedElementSize(int32_t dataType);
/// The dtypes ingot supports, for error messages.
inline const char *kSupportedDtypes =
    "float32, float16, bfloat16, float64, int64, int32, int16, int8, uint64, "
    "uint32, uint16, uint8, bool, float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), "
    "float4e2m1, int4, uint4, int2, uint2";

/// Element count of a tensor from its dims; nullopt on negative dims or
/// overflow.
std::optional<int64_t> elementCount(const onnx::TensorProto &tensor);

/// Streams the tensor's bytes (row-major, little-endian, ingot's element
/// layout) into `sink` in bounded chunks. `modelDir` resolves external data;
/// `file` names the model in errors.
Status streamTensor(const onnx::TensorProto &tensor, const std::string &name,
                    const std::string &modelDir, const std::string &file,
                    const ByteSink &sink);

/// Checks, without reading external files, that the tensor's data is
/// where it says and of the size its dtype and shape need: an external file
/// that exists and holds the byte range, or inline data of the right size.
Status checkTensorData(const onnx::TensorProto &tensor, const std::string &name,
                       const std::string &modelDir, const std::string &file);

/// Reads a (small) tensor's bytes into memory.
Status readTensor(const onnx::TensorProto &tensor, const std::string &name,
                  const std::string &modelDir, const std::string &file,
                  std::vector<char> &bytes);

/// The weight source of an ONNX import: owns the parsed model, so the
/// TensorProtos it serves stay alive, plus tensors the importer made from
/// Constant-node attributes.
class OnnxWeightSource : public WeightSource {
public:
  OnnxWeightSource(std::unique_ptr<onnx::ModelProto> model,
                   std::string modelDir, std::string file)
      : model_(std::move(model)), modelDir_(std::move(modelDir)),
        file_(std::move(file)) {}

  const onnx::ModelProto &model() const { return *model_; }
  /// Serves `tensor` (owned by the model) as param `name`.
  void addTensor(const std::string &name, const onnx::TensorProto *tensor) {
    tensors_[name] = tensor;
  }
  /// Serves a tensor built by the importer (a Constant's value_floats...).
  void addOwnedTensor(const std::string &name, onnx::TensorProto tensor);

  Status produce(const std::string &name, const ByteSink &sink) override;

private:
  std::unique_ptr<onnx::ModelProto> model_;
  std::string modelDir_;
  std::string file_;
  std::map<std::string, const onnx::TensorProto *> tensors_;
  std::map<std::string, std::unique_ptr<onnx::TensorProto>> owned_;
};

} // namespace ingot::compiler::onnximport
