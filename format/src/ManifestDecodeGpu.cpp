//===- ManifestDecodeGpu.cpp - The GPU targets of a manifest --------------===//
//
// Enum values are checked here like the rest of the decoder's; whether the
// steps, operands and code ranges they name exist is the validator's
// business (ManifestValidateGpu.cpp), which sees the whole manifest.
//
//===----------------------------------------------------------------------===//
#include "ManifestDecoder.h"

namespace ingot::detail {

bool Decoder::codeObject(const fb::CodeObject &in, CodeObject *c) {
  const unsigned format = unsigned(in.format());
  if (format < 1 || format > 2)
    return fail("invalid code format " + std::to_string(format) +
                " (expected 1 cubin or 2 ptx)");
  c->format = CodeObject::Format(format);
  c->offset = in.offset();
  c->bytes = in.bytes();
  return str(in.arch(), &c->arch);
}

bool Decoder::gpuKernel(const fb::GpuKernel &in, GpuKernel *k) {
  k->step = in.step();
  k->blockX = in.block_x();
  k->gridOperand = in.grid_operand();
  k->sharedBytes = in.shared_bytes();
  if (!str(in.symbol(), &k->symbol))
    return false;
  if (const Vector<const fb::GpuGridDim *> *grid = in.grid()) {
    if (grid->size() > 3)
      return fail("a kernel grid has " + std::to_string(grid->size()) +
                  " dimensions (at most 3)");
    for (const fb::GpuGridDim *d : *grid)
      k->grid.push_back({d->operand(), d->divisor(), d->extent()});
  }
  const Vector<const fb::GpuArg *> *args = in.args();
  if (!args)
    return true;
  if (!take(size_t(args->size()) * sizeof(fb::GpuArg)))
    return false;
  k->args.reserve(args->size());
  for (const fb::GpuArg *a : *args) {
    const unsigned kind = unsigned(a->kind());
    if (kind < 1 || kind > 6)
      return fail("invalid kernel argument kind " + std::to_string(kind) +
                  " (expected 1 pointer, 2 numel, 3 dim, 4 stride, 5 KV "
                  "keys or 6 KV values)");
    k->args.push_back({GpuArg::Kind(kind), a->operand(), a->axis()});
  }
  return true;
}

bool Decoder::gpuTarget(const fb::GpuTarget &in, GpuTarget *t) {
  return str(in.name(), &t->name) &&
         tables("objects", in.objects(), &t->objects, &Decoder::codeObject) &&
         tables("kernels", in.kernels(), &t->kernels, &Decoder::gpuKernel);
}

} // namespace ingot::detail
