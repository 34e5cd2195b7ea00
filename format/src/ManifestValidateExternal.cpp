//===- ManifestValidateExternal.cpp - Weights kept outside the artifact ---===//
//
// An artifact compiled with --weights=external names files the loader opens
// in a directory the user gives, and source tensors it looks up in them:
// file names must stay inside that directory, and every part a transform
// reads must name a listed tensor with a slice the loader can make.
//
//===----------------------------------------------------------------------===//
#include "ArtifactFormatUtil.h"
#include "ManifestValidate.h"
#include "ingot/SourceSlice.h"

#include <algorithm>
#include <set>

namespace ingot::format {
namespace {

/// A plain file name: no directory part, so it resolves inside the
/// directory --weights names.
bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

Status checkSources(const ExternalWeights &w) {
  for (size_t i = 0; i < w.files.size(); ++i)
    if (!isPlainFileName(w.files[i]) ||
        std::count(w.files.begin(), w.files.end(), w.files[i]) > 1)
      return fail("external weight file " + std::to_string(i) + " " +
                  quoted(w.files[i]) + " is not a unique plain file name");
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const SourceTensor &t = w.tensors[i];
    const std::string what =
        "external source tensor " + std::to_string(i) + " " + quoted(t.name);
    if (t.name.empty() || (i > 0 && !(w.tensors[i - 1].name < t.name)))
      return fail(what + " is unnamed or out of order (sorted, unique)");
    if (t.file >= w.files.size())
      return fail(what + " is in file " + std::to_string(t.file) + " of " +
                  std::to_string(w.files.size()));
    if (!safetensorsDTypeSize(t.dtype))
      return fail(what + " has an unknown dtype " + quoted(t.dtype));
    for (int64_t d : t.shape)
      if (d < 0)
        return fail(what + " has a negative dim");
  }
  return Status::ok();
}

bool isSourceValueType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

} // namespace

Status validateExternalWeights(const Manifest &m, uint64_t sectionBytes) {
  const ExternalWeights &w = m.externalWeights;
  const bool anyExternal =
      std::any_of(m.tensors.begin(), m.tensors.end(),
                  [](const TensorEntry &t) { return t.external; });
  if (w.empty())
    return anyExternal ? fail("tensors are made from external weights, but "
                              "the manifest names no external weight files")
                       : Status::ok();
  if (!anyExternal)
    return fail("the manifest names external weight files, but no tensor "
                "is made from them");
  if (w.spaceBytes < sectionBytes)
    return fail("the weight space of " + std::to_string(w.spaceBytes) +
                " bytes is smaller than the weight section");
  if (Status s = checkSources(w); !s)
    return s;
  std::set<std::string> names;
  for (const SourceTensor &t : w.tensors)
    names.insert(t.name);
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorEntry &t = m.tensors[i];
    if (!t.external)
      continue;
    const std::string what = "tensor " + std::to_string(i) + " " +
                             quoted(t.name) + " (made at load)";
    const WeightTransform &x = t.transform;
    if (x.parts.empty())
      return fail(what + " has no source parts");
    if (x.concatAxis < 0 || x.concatAxis >= int64_t(t.shape.size()))
      return fail(what + " concatenates along axis " +
                  std::to_string(x.concatAxis) + " of a rank-" +
                  std::to_string(t.shape.size()) + " tensor");
    if (!isSourceValueType(x.sourceType))
      return fail(what + " is made from " + dtypeName(x.sourceType) +
                  " values (expected f32, f16 or bf16)");
    for (const std::string &name : x.parts) {
      SourcePart part;
      if (Status s = parseSourcePart(name, &part); !s)
        return fail(what + ": " + s.message());
      if (!names.count(part.key))
        return fail(what + " reads " + quoted(part.key) +
                    ", which the external source tensors do not list");
    }
  }
  return Status::ok();
}

} // namespace ingot::format
