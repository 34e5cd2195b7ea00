//===- ComputeBounds.cpp - Upper bounds of every dynamic dim --------------===//
//
// Sizes in the graph grow with its symbols (sequence length, batch), so
// evaluating every shape rule with each symbol at its maximum gives the
// largest shape a value can take. The memory plan reserves exactly that; the
// runtime checks each kernel's real output against it, so a model whose
// sizes are not monotone in its symbols fails loudly instead of overflowing.
// A size set by tensor values (Range's limit, Resize's scales) has no such
// bound: it keeps -1 dims and the runtime allocates it once the kernel knows.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "dialects/Ingot/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace ingot {
#define GEN_PASS_DEF_COMPUTEBOUNDS
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// A Reshape whose target is run-time data keeps the input's element count
/// N, so no dim exceeds N over the product S of the known dims. With several
/// such dims the product of their bounds overestimates by (N / S)^(k - 1)
/// for k of them, which only costs arena space while it stays small; past
/// kMaxReshapeOverestimate the dims stay unbounded and the result is sized
/// at run time (an Unsqueeze with run-time axes of a 60-element tensor into
/// 6 dims would otherwise reserve 60^6 elements), where the target sizes
/// results at run time. The runtime still checks every real size.
void boundReshapeFromData(const shape::Shape &input,
                          const shape::Shape &declared, bool runTimeSizes,
                          shape::Shape &result) {
  constexpr int64_t kMaxReshapeOverestimate = 1024;
  int64_t total = shape::numElements(input), known = 1, unknown = 0;
  if (total == shape::kDynamic)
    return;
  for (size_t i = 0; i < result.size() && i < declared.size(); ++i)
    if (result[i] == shape::kDynamic)
      result[i] = declared[i];
  for (int64_t d : result)
    if (d != shape::kDynamic)
      known *= d;
    else
      ++unknown;
  const int64_t each = known == 0 ? 0 : total / known;
  int64_t over = 1;
  for (int64_t i = 1; i < unknown && runTimeSizes; ++i)
    if (__builtin_mul_overflow(over, std::max<int64_t>(each, 1), &over) ||
        over > kMaxReshapeOverestimate)
      return;
  for (int64_t &d : result)
    if (d == shape::kDynamic)
      d = each;
}

/// A convolution's output shrinks as its window grows, so at the symbols'
/// maxima a kernel dim known only at run time reads as 1 (the largest
/// output), not as its maximum (the smallest).
void boundRunTimeWindow(Operation *op, std::vector<ValueInfo> &ins) {
  if (!isa<ConvOp, ConvIntegerOp>(op) || ins.size() < 2 ||
      op->hasAttr("kernel_shape"))
    return;
  shape::Shape declared = shapeOf(op->getOperand(1).getType());
  for (size_t i = 2; i < declared.size() && i < ins[1].shape.size(); ++i)
    if (declared[i] == shape::kDynamic)
      ins[1].shape[i] = 1;
}

/// A bound no machine could reserve (several dims each bounded by a whole
/// element count, multiplied) is no bound: the result's dynamic dims go
/// back to -1 and it is sized at run time.
void dropUnusableBound(Operation *op, shape::Shape &bound) {
  constexpr uint64_t kMaxElements = uint64_t(1) << 40;
  uint64_t n = 1;
  bool usable = true;
  for (int64_t d : bound)
    if (d > 0 &&
        (__builtin_mul_overflow(n, uint64_t(d), &n) || n > kMaxElements))
      usable = false;
  if (usable)
    return;
  shape::Shape declared = shapeOf(op->getResult(0).getType());
  for (size_t i = 0; i < bound.size() && i < declared.size(); ++i)
    if (declared[i] == shape::kDynamic)
      bound[i] = shape::kDynamic;
}

/// Each result of an ingot.if is bounded by the larger of what its two
/// branches yield, dim by dim (-1 if either is sized at run time); the
/// bounds go to `ingot.result_bounds`, one array per result.
void boundBranchResults(IfOp op, llvm::DenseMap<Value, ValueInfo> &info) {
  auto boundOf = [&](Value v) {
    auto it = info.find(v);
    return it != info.end() ? it->second.shape : valueInfoFromIR(v).shape;
  };
  Builder b(op.getContext());
  SmallVector<Attribute> bounds;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    shape::Shape a = boundOf(op.yieldOf(0).getValues()[i]);
    shape::Shape c = boundOf(op.yieldOf(1).getValues()[i]);
    for (size_t d = 0; d < a.size() && d < c.size(); ++d)
      a[d] = a[d] == shape::kDynamic || c[d] == shape::kDynamic
                 ? shape::kDynamic
                 : std::max(a[d], c[d]);
    bounds.push_back(b.getDenseI64ArrayAttr(a));
    info[op.getResult(i)] = ValueInfo{std::move(a), std::nullopt};
  }
  op->setAttr("ingot.result_bounds", b.getArrayAttr(bounds));
}

struct ComputeBoundsPass
    : public ingot::impl::ComputeBoundsBase<ComputeBoundsPass> {
  using ComputeBoundsBase::ComputeBoundsBase;

  /// Parses `max-dims` entries "SYMBOL=N".
  LogicalResult parseMaxDims(llvm::StringMap<int64_t> &bounds) {
    if (defaultMaxDim < 1)
      return getOperation().emitError("default-max-dim must be >= 1, got ")
             << defaultMaxDim;
    for (const std::string &entry : maxDims) {
      auto [name, value] = StringRef(entry).split('=');
      int64_t n;
      if (name.empty() || value.getAsInteger(10, n) || n < 1)
        return getOperation().emitError("bad max-dims entry '")
               << entry << "': expected SYMBOL=N with N >= 1";
      bounds[name] = n;
    }
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    llvm::StringMap<int64_t> bounds;
    if (failed(parseMaxDims(bounds)))
      return signalPassFailure();

    llvm::DenseMap<Value, ValueInfo> info;
    llvm::StringMap<int64_t> used;
    Builder b(&getContext());
    for (BlockArgument arg : func.getArguments()) {
      auto names = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                    "ingot.dims");
      ValueInfo v;
      v.shape = shapeOf(arg.getType());
      for (size_t i = 0; i < v.shape.size(); ++i) {
        if (v.shape[i] != shape::kDynamic)
          continue;
        StringRef sym;
        if (names && i < names.size())
          if (auto s = dyn_cast<StringAttr>(names[i]))
            sym = s.getValue();
        if (sym.empty()) {
          func.emitError("input ") << arg.getArgNumber() << " dim " << i
                                   << " is dynamic but has no symbol name";
          return signalPassFailure();
        }
        auto it = bounds.find(sym);
        v.shape[i] = it != bounds.end() ? it->second : defaultMaxDim;
        used[sym] = v.shape[i];
      }
      info[arg] = std::move(v);
    }

    WalkResult walk = func.walk([&](Operation *op) {
      // A failing branch's results are never written (LowerToPlan).
      if (isa<func::ReturnOp, func::FuncOp, YieldOp, FailOp>(op))
        return WalkResult::advance();
      // The walk is post-order: both branches are bounded by now.
      if (auto branch = dyn_cast<IfOp>(op)) {
        if (!runTimeSizes) {
          op->emitOpError("branches on a condition known only at run time, "
                          "and this target runs a static plan; pin the "
                          "inputs the condition depends on, or compile for "
                          "the cpu target");
          return WalkResult::interrupt();
        }
        boundBranchResults(branch, info);
        return WalkResult::advance();
      }
      std::vector<ValueInfo> ins, outs;
      for (Value v : op->getOperands()) {
        auto it = info.find(v);
        ins.push_back(it != info.end() ? it->second : valueInfoFromIR(v));
      }
      boundRunTimeWindow(op, ins);
      std::string error;
      if (failed(inferValueInfo(op, ins, outs, error))) {
        // Models that only run at some sizes (an OCR net whose height must
        // be 48) fail here at the default bound: name the bounds used.
        std::string at;
        for (const auto &[sym, max] : used)
          at +=
              (at.empty() ? "" : ", ") + sym.str() + "=" + std::to_string(max);
        std::string why = "at the symbols' maxima (" + at + "): " + error +
                          "; if the model only runs at some sizes, bound its "
                          "symbols with --max-dim SYMBOL=N or pin inputs "
                          "with --shape";
        if (!runTimeSizes) {
          op->emitOpError(why);
          return WalkResult::interrupt();
        }
        // The real sizes may well agree (each dim its own symbol, all at
        // one maximum): the runtime checks them, and the result is sized
        // when the kernel runs instead of in the arena.
        op->emitWarning() << "'" << op->getName() << "' op " << why
                          << "; its result is sized at run time";
        outs.clear();
        for (Type t : op->getResultTypes())
          outs.push_back(ValueInfo{shapeOf(t), std::nullopt});
      }
      shape::Shape &bound = outs[0].shape;
      if (isa<ReshapeOp>(op))
        boundReshapeFromData(ins[0].shape, shapeOf(op->getResult(0).getType()),
                             runTimeSizes, bound);
      if (shape::numElements(bound) == shape::kDynamic) {
        if (std::optional<shape::Shape> b = boundTensorResult(op, ins, bound))
          bound = *b;
        else if (std::optional<shape::Shape> m =
                     boundMathResult(op, ins, bound))
          bound = *m;
      }
      if (runTimeSizes)
        dropUnusableBound(op, bound);
      if (shape::numElements(bound) == shape::kDynamic && !runTimeSizes) {
        op->emitOpError("result size depends on run-time data, not on input "
                        "shapes, and this target needs every buffer bounded "
                        "at compile time; pin the inputs with --shape");
        return WalkResult::interrupt();
      }
      // One ingot.max_shape serves every dynamic result: ops with several
      // (the fused add + norm ops) produce them with one shape.
      for (size_t r = 1; r < outs.size(); ++r)
        if (!cast<RankedTensorType>(op->getResult(r).getType())
                 .hasStaticShape() &&
            outs[r].shape != bound) {
          op->emitOpError("results have different bounds");
          return WalkResult::interrupt();
        }
      bool dynamic = llvm::any_of(op->getResultTypes(), [](Type t) {
        return !cast<RankedTensorType>(t).hasStaticShape();
      });
      if (dynamic)
        op->setAttr("ingot.max_shape", b.getDenseI64ArrayAttr(bound));
      for (auto [result, v] : llvm::zip(op->getResults(), outs))
        info[result] = v;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    SmallVector<NamedAttribute> symbols;
    for (auto &entry : used)
      symbols.push_back(b.getNamedAttr(entry.getKey(),
                                       b.getI64IntegerAttr(entry.getValue())));
    func->setAttr("ingot.symbols", b.getDictionaryAttr(symbols));
  }
};

} // namespace
