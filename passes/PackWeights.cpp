//===- PackWeights.cpp - Linear weights in the layout the kernel streams --===//
//
// At decode the "nk" linear kernel streams its weight rows in blocks; with
// row-major weights each block is 16 separate row streams, with "nk16" (see
// format/include/ingot/WeightLayout.h) it is one contiguous run. The pass
// only records the layout on a new param: the artifact writer packs the
// bytes at compile time, so loading stays a plain map.
//
// What is packed follows measurement on AVX-512: 16-bit weights stream
// 1.2-1.4x faster packed in the GEMV microbenchmark, f32 ones no faster at
// one row and slower at four or more, so `element-types` defaults to
// bf16,f16. End to end the packed bf16 SmolLM2 decodes no faster and
// prefills 17% slower, so the compiler runs this pass only when asked
// (--pack-weights=on). A param that other ops also read (a tied
// embedding's gather) is left alone: a packed copy would store it twice.
//
// "q16" (layout=q16) packs q8/q4/q4m weights in groups of 32, and q8 ones
// per output channel, for the int8 activation kernels
// (runtime/src/cpu/LinearQ16.h); `ingot compile
// --act-quant int8` (auto's choice for an LLM on the CPU) runs it after
// quantisation. The gather kernel reads
// "q16" rows, so a tied embedding moves to the packed param with its
// lm_head and is still stored once.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

namespace ingot {
#define GEN_PASS_DEF_PACKWEIGHTS
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// Whether every use of `p` reads it in a way the packed layout serves:
/// as the weight of an "nk" linear, or for "q16" also as a gather's table
/// on axis 0 (the gather kernel reads "q16" rows).
bool usesAllowPacking(ParamOp p, StringRef layout) {
  for (OpOperand &use : p->getUses()) {
    if (auto user = dyn_cast<LinearOp>(use.getOwner()))
      if (use.get() == user.getWeight() && user.getWLayout() == "nk")
        continue;
    if (auto gather = dyn_cast<GatherOp>(use.getOwner()))
      if (layout == "q16" && use.get() == gather.getData() &&
          gather.getAxis() == 0)
        continue;
    return false;
  }
  return true;
}

/// Whether `p`'s element type (or for "q16" its block format) is packed.
bool typeSelected(ParamOp p, StringRef layout,
                  ArrayRef<std::string> elementTypes) {
  if (layout == "q16") {
    QuantAttr q = p.getQuantAttr();
    if (!q)
      return false;
    // q8 per output channel: one group of K a row (x then per row too).
    auto type = p.getType();
    if (q.getFormat() == "q8" && type.getRank() == 2 &&
        q.getGroup() == type.getDimSize(1))
      return true;
    return q.getGroup() == 32 &&
           llvm::is_contained({"q8", "q4", "q4m"}, q.getFormat());
  }
  if (p.getQuant())
    return false;
  std::string element;
  llvm::raw_string_ostream(element) << p.getType().getElementType();
  static const std::string kMeasuredFaster[] = {"bf16", "f16"};
  return elementTypes.empty() ? llvm::is_contained(kMeasuredFaster, element)
                              : llvm::is_contained(elementTypes, element);
}

/// The row-major [N, K] param behind a linear's weight that `layout` can
/// hold with at least `minRows` rows, or null.
ParamOp packableWeight(LinearOp l, StringRef layout, int64_t minRows,
                       ArrayRef<std::string> elementTypes) {
  if (l.getWLayout() != "nk")
    return nullptr;
  auto p = l.getWeight().getDefiningOp<ParamOp>();
  if (!p || p.getLayout() != "row-major" || !usesAllowPacking(p, layout) ||
      !typeSelected(p, layout, elementTypes))
    return nullptr;
  auto type = p.getType();
  if (type.getRank() != 2 || ShapedType::isDynamic(type.getDimSize(0)) ||
      ShapedType::isDynamic(type.getDimSize(1)) || type.getDimSize(0) < minRows)
    return nullptr;
  // q16 panels are whole: 16 rows, 32 columns per block.
  if (layout == "q16" &&
      (type.getDimSize(0) % 16 != 0 || type.getDimSize(1) % 32 != 0))
    return nullptr;
  return p;
}

/// The packed copy of `p`: the same source tensors (a merged param keeps its
/// parts and axis, the writer concatenates then packs), another name.
ParamOp packedParam(ParamOp p, StringRef layout) {
  OpBuilder b(p);
  b.setInsertionPointAfter(p);
  ArrayAttr parts =
      p.getParts() ? *p.getParts() : b.getStrArrayAttr({p.getName()});
  return ParamOp::create(b, p.getLoc(), p.getType(),
                         b.getStringAttr(p.getName() + "@" + layout), parts,
                         b.getI64IntegerAttr(p.getConcatAxis()),
                         b.getStringAttr(layout), p.getQuantAttr());
}

struct PackWeightsPass : public ingot::impl::PackWeightsBase<PackWeightsPass> {
  using PackWeightsBase::PackWeightsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (layout != "nk16" && layout != "q16") {
      func.emitError("ingot-pack-weights: unknown layout '")
          << layout << "'; known: nk16, q16";
      return signalPassFailure();
    }
    // One packed param per original, which all its users then read.
    llvm::SetVector<Operation *> packable;
    func.walk([&](LinearOp l) {
      if (ParamOp p = packableWeight(l, layout, minRows, elementTypes))
        packable.insert(p);
    });
    for (Operation *op : packable) {
      auto p = cast<ParamOp>(op);
      ParamOp q = packedParam(p, layout);
      for (Operation *user : llvm::to_vector(p->getUsers()))
        if (auto l = dyn_cast<LinearOp>(user))
          l.setWLayout(layout);
      p.getResult().replaceAllUsesWith(q.getResult());
      p->erase();
    }
  }
};

} // namespace
