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
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace ingot {
#define GEN_PASS_DEF_PACKWEIGHTS
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// The row-major [N, K] param behind a linear's weight with at least
/// `minRows` rows, or null.
ParamOp packableWeight(LinearOp l, int64_t minRows,
                       ArrayRef<std::string> elementTypes) {
  if (l.getWLayout() != "nk")
    return nullptr;
  auto p = l.getWeight().getDefiningOp<ParamOp>();
  if (!p || p.getLayout() != "row-major" || p.getQuant())
    return nullptr;
  // Only linears (as their weight) may read it.
  for (OpOperand &use : p->getUses()) {
    auto user = dyn_cast<LinearOp>(use.getOwner());
    if (!user || use.get() != user.getWeight() ||
        user.getWLayout() != "nk")
      return nullptr;
  }
  std::string element;
  llvm::raw_string_ostream(element) << p.getType().getElementType();
  static const std::string kMeasuredFaster[] = {"bf16", "f16"};
  if (elementTypes.empty() ? !llvm::is_contained(kMeasuredFaster, element)
                           : !llvm::is_contained(elementTypes, element))
    return nullptr;
  auto type = p.getType();
  if (type.getRank() != 2 || ShapedType::isDynamic(type.getDimSize(0)) ||
      ShapedType::isDynamic(type.getDimSize(1)) || type.getDimSize(0) < minRows)
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
  return ParamOp::create(
      b, p.getLoc(), p.getType(), b.getStringAttr(p.getName() + "@" + layout),
      parts, b.getI64IntegerAttr(p.getConcatAxis()), b.getStringAttr(layout),
      /*quant=*/nullptr);
}

struct PackWeightsPass : public ingot::impl::PackWeightsBase<PackWeightsPass> {
  using PackWeightsBase::PackWeightsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (layout != "nk16") {
      func.emitError("ingot-pack-weights: unknown layout '")
          << layout << "'; known: nk16";
      return signalPassFailure();
    }
    // One packed param per original, shared by all its linears.
    llvm::DenseMap<Operation *, ParamOp> packed;
    func.walk([&](LinearOp l) {
      ParamOp p = packableWeight(l, minRows, elementTypes);
      if (!p)
        return;
      ParamOp &q = packed[p.getOperation()];
      if (!q)
        q = packedParam(p, layout);
      l.getWeightMutable().assign(q.getResult());
      l.setWLayout(layout);
    });
    for (auto &[op, q] : packed)
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
