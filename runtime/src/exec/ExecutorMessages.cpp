//===- ExecutorMessages.cpp - How the executor names things ---------------===//
#include "exec/ExecutorMessages.h"

namespace ingot {

std::string describeIo(const IoSpec &io) {
  std::string r = io.name + ": " + dtypeName(io.dtype) + "[";
  for (size_t i = 0; i < io.dims.size(); ++i) {
    if (i)
      r += ",";
    const Dim &d = io.dims[i];
    r += !d.symbol.empty() ? d.symbol
         : d.size < 0      ? std::string("?")
                           : std::to_string(d.size);
  }
  return r + "]";
}

std::string describeInputs(const Manifest &m) {
  std::string r;
  for (const IoSpec &io : m.inputs)
    r += "\n  " + describeIo(io);
  return r.empty() ? " (none)" : r;
}

std::string describeBuffer(const Buffer &b) {
  return "buffer #" + std::to_string(b.id) +
         (b.name.empty() ? "" : " '" + b.name + "'");
}

std::string bufferLabel(const Buffer &b) {
  return b.name.empty() ? std::string("#").append(std::to_string(b.id))
                        : b.name;
}

Status checkOutputShape(const IoSpec &io, const shape::Shape &shape) {
  bool ok = shape.size() == io.dims.size();
  for (size_t d = 0; ok && d < shape.size(); ++d)
    ok = !io.dims[d].symbol.empty() || io.dims[d].size < 0 ||
         io.dims[d].size == shape[d];
  if (ok)
    return Status::ok();
  return Status::error("model output '" + io.name + "' was computed with " +
                       "shape " + shape::toString(shape) +
                       ", but the manifest declares " + describeIo(io));
}

std::string describeStep(const Step &s, size_t index) {
  return "step " + std::to_string(index) + " (" + s.kernel +
         (s.origin.empty() ? "" : ", node '" + s.origin + "'") + ")";
}

} // namespace ingot
