//===- InstantiateCudaTemplates.cpp - LLM steps as CUDA template instances ===//
//
// Runs after ingot-generate-cuda-kernels: a step it already covered keeps
// its generated kernel. Steps are numbered in walk order, as the artifact
// writer numbers them, so the symbols (ingot_s<step>_<kernel>) are unique
// and stable; a step whose wrapper equals an earlier step's (the next
// layer's) launches that earlier kernel instead.
//
//===----------------------------------------------------------------------===//
#include "codegen/Passes.h"
#include "codegen/cuda/CudaTargets.h"
#include "codegen/cuda/CudaTemplates.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>

namespace ingot::codegen {
#define GEN_PASS_DEF_INSTANTIATECUDATEMPLATES
#include "codegen/Passes.h.inc"
} // namespace ingot::codegen

using namespace mlir;
using namespace ingot;
using namespace ingot::codegen;

namespace {

/// One launch as the dictionary CudaSerialize.cpp reads.
DictionaryAttr launchAttr(OpBuilder &b, const TemplateLaunch &launch) {
  std::vector<int64_t> args, grid;
  for (const GpuArgSpec &a : launch.args)
    args.insert(args.end(), {static_cast<int64_t>(a.kind), a.operand, a.axis});
  for (const GridDimSpec &d : launch.grid)
    grid.insert(grid.end(), {d.operand, d.divisor, d.extent});
  auto symbol = SymbolRefAttr::get(
      b.getStringAttr(kCudaModuleName),
      {FlatSymbolRefAttr::get(b.getStringAttr(launch.symbol))});
  return b.getDictionaryAttr({
      b.getNamedAttr("symbol", symbol),
      b.getNamedAttr("block", b.getI64IntegerAttr(launch.blockSize)),
      b.getNamedAttr("grid_operand", b.getI64IntegerAttr(launch.gridOperand)),
      b.getNamedAttr("grid", b.getDenseI64ArrayAttr(grid)),
      b.getNamedAttr("args", b.getDenseI64ArrayAttr(args)),
  });
}

/// The instance's source cut into one wrapper per launch (each starts with
/// `extern "C"`, in launch order).
std::vector<std::string> wrappersOf(const TemplateInstance &inst) {
  std::vector<std::string> parts;
  const std::string head = "extern \"C\"";
  for (size_t at = inst.source.find(head); at != std::string::npos;) {
    const size_t next = inst.source.find(head, at + head.size());
    parts.push_back(inst.source.substr(at, next - at));
    at = next;
  }
  return parts;
}

/// Layers repeat the same shapes: a wrapper whose text, its name aside,
/// equals an earlier one is not compiled again; its launch calls the
/// earlier kernel (pointers, cache layers and sizes are arguments).
class InstanceDeduplicator {
public:
  /// Renames `inst`'s launches to earlier identical kernels and keeps only
  /// the source of the new ones.
  void apply(TemplateInstance &inst) {
    std::vector<std::string> wrappers = wrappersOf(inst);
    if (wrappers.size() != inst.launches.size())
      return; // not one wrapper per launch: leave it as it is
    std::string kept;
    for (size_t i = 0; i < wrappers.size(); ++i) {
      std::string key = wrappers[i];
      const std::string &symbol = inst.launches[i].symbol;
      const size_t at = key.find(" " + symbol + "(");
      if (at != std::string::npos)
        key.replace(at + 1, symbol.size(), "@");
      auto [it, fresh] = seen_.emplace(key, symbol);
      if (fresh)
        kept += wrappers[i];
      else
        inst.launches[i].symbol = it->second;
    }
    inst.source = kept;
  }

private:
  std::map<std::string, std::string> seen_; // text without name -> symbol
};

struct InstantiateCudaTemplatesPass
    : public ingot::codegen::impl::InstantiateCudaTemplatesBase<
          InstantiateCudaTemplatesPass> {
  using InstantiateCudaTemplatesBase::InstantiateCudaTemplatesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (kvLayout != "block,token,head,dim" &&
        kvLayout != "block,head,token,dim") {
      module.emitError("kv-layout must be block,token,head,dim or "
                       "block,head,token,dim, got '")
          << kvLayout << "'";
      return signalPassFailure();
    }
    if (kvBlockSize < 1) {
      module.emitError("kv-block-size must be at least 1");
      return signalPassFailure();
    }
    TemplateOptions options{kvLayout, kvBlockSize};
    InstanceDeduplicator dedup;
    OpBuilder b(&getContext());
    int64_t index = 0;
    module.walk([&](plan::KernelOp kernel) {
      const int64_t step = index++;
      if (kernel->hasAttr(kCudaKernelAttr))
        return;
      std::string whyNot;
      const std::string symbol =
          "ingot_s" + std::to_string(step) + "_" + kernel.getKernel().str();
      std::optional<TemplateInstance> inst =
          instantiateCudaTemplate(kernel, symbol, options, &whyNot);
      if (!inst) {
        if (explain)
          kernel.emitRemark("no CUDA kernel: ") << whyNot;
        return;
      }
      dedup.apply(*inst);
      SmallVector<Attribute> launches;
      for (const TemplateLaunch &l : inst->launches)
        launches.push_back(launchAttr(b, l));
      kernel->setAttr(kCudaKernelAttr, b.getArrayAttr(launches));
      if (!inst->source.empty())
        kernel->setAttr(kCudaSourceAttr, b.getStringAttr(inst->source));
    });
  }
};

} // namespace
