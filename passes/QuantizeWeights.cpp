//===- QuantizeWeights.cpp - Linear weights in quantised block formats ----===//
//
// Decode reads every weight once per token, so its speed is the bytes of
// the weights over the memory bandwidth: int8 reads ~1/4 and int4 ~1/7 of
// f32. The pass only records the format on a new param (#ingot.quant);
// the artifact writer quantises while streaming, one tensor at a time, so
// compile memory stays one tensor, and the linear kernel reads the blocks.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

#include "llvm/Support/GlobPattern.h"
#include <array>
#include <map>
#include <tuple>

namespace ingot {
#define GEN_PASS_DEF_QUANTIZEWEIGHTS
#include "passes/Passes.h.inc"
} // namespace ingot

using namespace mlir;
using namespace ingot;
using namespace ingot::graph;

namespace {

/// The linear's node name ("lm_head", "layers.3.mlp.down_proj"), if any.
StringRef nodeName(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().strref();
  return {};
}

/// The unquantised row-major 2-D static float param that defines `v`.
ParamOp floatMatrixParam(Value v) {
  auto p = v.getDefiningOp<ParamOp>();
  if (!p || p.getLayout() != "row-major" || p.getQuant())
    return nullptr;
  auto type = p.getType();
  Type elem = type.getElementType();
  if (type.getRank() != 2 || !type.hasStaticShape() ||
      !(elem.isF32() || elem.isF16() || elem.isBF16()))
    return nullptr;
  return p;
}

/// The param behind a quantisable ("nk") linear's weight.
ParamOp quantisableWeight(LinearOp l) {
  return l.getWLayout() == "nk" ? floatMatrixParam(l.getWeight()) : nullptr;
}

/// The table an axis-0 gather reads rows of (an embedding), for
/// mode=stored.
ParamOp gatheredTable(GatherOp g) {
  return g.getAxis() == 0 ? floatMatrixParam(g.getData()) : nullptr;
}

/// mode=stored: the one format all source tensors of `p` are stored in,
/// according to the function's `ingot.stored_formats`; null when a part is
/// missing from it or the parts disagree.
QuantAttr storedFormatOf(ParamOp p, DictionaryAttr stored) {
  SmallVector<StringRef> names;
  if (auto parts = p.getParts())
    for (Attribute a : *parts)
      names.push_back(cast<StringAttr>(a).getValue());
  else
    names.push_back(p.getName());
  QuantAttr common;
  for (StringRef n : names) {
    auto q = dyn_cast_or_null<QuantAttr>(stored.get(n));
    if (!q || (common && q != common))
      return nullptr;
    common = q;
  }
  return common;
}

struct QuantizeWeightsPass
    : public ingot::impl::QuantizeWeightsBase<QuantizeWeightsPass> {
  using QuantizeWeightsBase::QuantizeWeightsBase;

  /// The block format and default group of mode/scheme, or failure.
  LogicalResult formatOf(func::FuncOp func, std::string *format,
                         int64_t *defaultGroup) {
    const std::string chosen =
        scheme.empty() ? (mode == "int4" ? "asym" : "sym") : std::string(scheme);
    const bool asym = chosen == "asym";
    if (chosen != "sym" && !asym)
      return func.emitError("ingot-quantize-weights: scheme must be sym or "
                            "asym, got '")
             << scheme << "'";
    if (mode == "int8" && !asym) {
      *format = "q8";
      *defaultGroup = 32;
    } else if (mode == "int4") {
      *format = asym ? "q4m" : "q4";
      *defaultGroup = 32;
    } else if (mode == "fp8" && !asym) {
      *format = "f8e4m3";
      *defaultGroup = 0;
    } else if (mode == "int8" || mode == "fp8") {
      return func.emitError("ingot-quantize-weights: ")
             << mode << " is symmetric only; scheme=asym needs int4";
    } else {
      return func.emitError("ingot-quantize-weights: unknown mode '")
             << mode << "'; known: none, int8, int4, fp8, stored";
    }
    return success();
  }

  LogicalResult parseExcludes(func::FuncOp func,
                              SmallVectorImpl<llvm::GlobPattern> &patterns) {
    for (const std::string &e : exclude) {
      auto g = llvm::GlobPattern::create(e);
      if (!g)
        return func.emitError("ingot-quantize-weights: bad exclude pattern '")
               << e << "': " << llvm::toString(g.takeError());
      patterns.push_back(std::move(*g));
    }
    return success();
  }

  static bool excludedByName(ParamOp p, Location userLoc,
                             ArrayRef<llvm::GlobPattern> patterns) {
    SmallVector<StringRef> names = {p.getName(), nodeName(userLoc)};
    if (auto parts = p.getParts())
      for (Attribute a : *parts)
        names.push_back(cast<StringAttr>(a).getValue());
    for (const llvm::GlobPattern &g : patterns)
      for (StringRef n : names)
        if (!n.empty() && g.match(n))
          return true;
    return false;
  }

  /// mode=stored: linear weights and embedding tables take the block format
  /// their source tensors are stored in (a GGUF file's Q8_0/Q4_0/Q4_1, or
  /// the format the importer converts another type to).
  void keepStoredFormats(func::FuncOp func,
                         ArrayRef<llvm::GlobPattern> patterns) {
    auto stored = func->getAttrOfType<DictionaryAttr>("ingot.stored_formats");
    if (!stored)
      return;
    std::map<Operation *, ParamOp> quantised;
    auto assign = [&](ParamOp p, OpOperand &use, Operation *user) {
      QuantAttr q = p ? storedFormatOf(p, stored) : nullptr;
      if (!q || excludedByName(p, user->getLoc(), patterns))
        return;
      ParamOp &qp = quantised[p.getOperation()];
      if (!qp)
        qp = quantisedParam(p, q.getFormat(), q.getGroup());
      use.assign(qp.getResult());
    };
    func.walk([&](LinearOp l) {
      assign(quantisableWeight(l), l.getWeightMutable(), l);
    });
    func.walk([&](GatherOp g) {
      assign(gatheredTable(g), g.getDataMutable(), g);
    });
    for (auto &[original, q] : quantised)
      if (original->use_empty())
        original->erase();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || mode == "none")
      return;
    SmallVector<llvm::GlobPattern> patterns;
    if (failed(parseExcludes(func, patterns)))
      return signalPassFailure();
    if (mode == "stored")
      return keepStoredFormats(func, patterns);
    std::string format;
    int64_t defaultGroup = 0;
    if (failed(formatOf(func, &format, &defaultGroup)))
      return signalPassFailure();
    if (groupSize < -1) {
      func.emitError("ingot-quantize-weights: group-size must be >= 0 (0: "
                     "per channel), got ")
          << groupSize;
      return signalPassFailure();
    }
    const std::string head = lmHead.empty()
                                 ? (mode == "int4" ? "int8" : "same")
                                 : std::string(lmHead);
    if (failed(checkChoice(func, "lm-head", head, {"same", "int8", "none"})) ||
        failed(checkChoice(func, "embed", embed, {"none", "same", "int8"})))
      return signalPassFailure();
    // The format and group of a weight that follows `choice` (same, int8).
    auto formatFor = [&](StringRef choice, ParamOp p) {
      std::string f = format;
      int64_t group = groupSize < 0 ? defaultGroup : groupSize;
      if (choice == "int8")
        f = "q8", group = groupSize < 0 ? 32 : groupSize;
      const int64_t k = p.getType().getDimSize(1);
      if (group == 0 || group > k)
        group = k; // one group per row: per output channel
      return std::make_pair(f, group);
    };
    // One quantised param per original, format and group, shared by its
    // readers (a tied table quantised alike for its gather and the lm_head
    // is stored once); the original stays for other readers and is erased
    // when none are left.
    std::map<std::tuple<Operation *, std::string, int64_t>, ParamOp> quantised;
    auto assign = [&](ParamOp p, std::pair<std::string, int64_t> fg,
                      OpOperand &use) {
      ParamOp &q = quantised[{p.getOperation(), fg.first, fg.second}];
      if (!q)
        q = quantisedParam(p, fg.first, fg.second);
      use.assign(q.getResult());
    };
    func.walk([&](LinearOp l) {
      ParamOp p = quantisableWeight(l);
      if (!p || excludedByName(p, l.getLoc(), patterns))
        return;
      const bool isHead = nodeName(l.getLoc()) == "lm_head";
      if (isHead && head == "none")
        return;
      assign(p, formatFor(isHead ? StringRef(head) : "same", p),
             l.getWeightMutable());
    });
    if (embed != "none") {
      // Collected first: readRowsAsF32 erases the casts that follow them.
      SmallVector<GatherOp> gathers;
      func.walk([&](GatherOp g) { gathers.push_back(g); });
      for (GatherOp g : gathers) {
        ParamOp p = gatheredTable(g);
        if (!p || excludedByName(p, g.getLoc(), patterns))
          continue;
        assign(p, formatFor(embed, p), g.getDataMutable());
        readRowsAsF32(g);
      }
    }
    llvm::SmallPtrSet<Operation *, 8> originals;
    for (auto &[key, q] : quantised)
      originals.insert(std::get<0>(key));
    for (Operation *op : originals)
      if (op->use_empty())
        op->erase();
  }

  /// `value` is one of the three `allowed` words.
  static LogicalResult checkChoice(func::FuncOp func, StringRef option,
                                   StringRef value,
                                   std::array<StringRef, 3> allowed) {
    if (llvm::is_contained(allowed, value))
      return success();
    return func.emitError("ingot-quantize-weights: ")
           << option << " must be " << allowed[0] << ", " << allowed[1]
           << " or " << allowed[2] << ", got '" << value << "'";
  }

  /// The runtime decodes a quantised table's rows to f32. A gather that
  /// gave the table's bf16/f16 now feeds its casts to f32 directly (the
  /// rows are the dequantised values, not rounded to the old type on the
  /// way) and any other reader through a cast back.
  static void readRowsAsF32(GatherOp g) {
    auto type = cast<RankedTensorType>(g.getType());
    if (type.getElementType().isF32())
      return;
    g.getResult().setType(type.clone(Float32Type::get(g.getContext())));
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : g.getResult().getUses())
      uses.push_back(&use);
    CastOp back;
    for (OpOperand *use : uses) {
      auto c = dyn_cast<CastOp>(use->getOwner());
      if (c && c.getType() == g.getType()) {
        c.getResult().replaceAllUsesWith(g.getResult());
        c.erase();
        continue;
      }
      if (!back) {
        OpBuilder b(g->getContext());
        b.setInsertionPointAfter(g);
        back = CastOp::create(b, g.getLoc(), type, g.getResult(), nullptr);
      }
      use->set(back.getResult());
    }
  }

  static ParamOp quantisedParam(ParamOp p, StringRef format, int64_t group) {
    OpBuilder b(p);
    b.setInsertionPointAfter(p);
    ArrayAttr parts =
        p.getParts() ? *p.getParts() : b.getStrArrayAttr({p.getName()});
    std::string name =
        (p.getName() + "@" + format + "g" + std::to_string(group)).str();
    return ParamOp::create(b, p.getLoc(), p.getType(), b.getStringAttr(name),
                           parts, b.getI64IntegerAttr(p.getConcatAxis()),
                           b.getStringAttr("row-major"),
                           QuantAttr::get(b.getContext(), format, group));
  }
};

} // namespace
