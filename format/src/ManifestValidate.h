//===- ManifestValidate.h - The plan checks of validateManifest -*- C++ -*-===//
//
// validateManifest (ArtifactFormat.h) first checks that every index and
// offset is in range; these then check that the plan is one the runtime can
// run as written: each step as its kernel's signature says
// (ManifestValidatePlan.cpp), model I/O and an LLM's entry points as the
// executor and engine use them (ManifestValidateIo.cpp), and the weights and
// the arena without two live values in one byte (ManifestValidateMemory.cpp).
// A manifest edited with consistent checksums meets these at load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Manifest.h"
#include "ingot/Status.h"

#include <string>

namespace ingot::format {

/// "step 3 ('linear' from 'lm_head')".
std::string describeStep(const Manifest &m, size_t index);
/// "buffer 12 'lm_head'".
std::string describeBuffer(const Manifest &m, uint32_t id);

/// Every step of a kernel this runtime registers against its signature:
/// operand counts, absent required operands, dtypes, attribute names.
/// Steps of other kernels are left to the executor, which names them.
Status validateSteps(const Manifest &m);

/// Model inputs and outputs: unique names, and each declared with its
/// buffer's dtype and rank.
Status validateIo(const Manifest &m);

/// An LLM plan (hasLlm with steps): the inputs the engine feeds, the logits
/// it reads, and paged-attention steps that fit the KV cache it allocates.
Status validateLlmEntryPoints(const Manifest &m);

/// Weights kept outside (--weights=external): safe file names, source
/// tensors sorted and in range, and every external tensor's parts naming
/// one of them with a slice suffix SourceSlice.h accepts.
Status validateExternalWeights(const Manifest &m, uint64_t sectionBytes);

/// No two tensors share bytes of the weight section.
Status validateTensorLayout(const Manifest &m);

/// The arena as the memory planner lays it out: a step reads only what an
/// earlier step wrote, every arena output of the model is written, and
/// buffers live at the same time never share bytes, except an in-place
/// kernel's output taking over the slice of an input that dies there.
Status validateArenaLiveness(const Manifest &m);

/// Each GPU target's kernels: steps that exist, in ascending order, each
/// once; launch sizes a GPU accepts; arguments naming operands and axes
/// the step has. Code object ranges need the sections: validateCodeSections.
Status validateGpuTargets(const Manifest &m);

} // namespace ingot::format
