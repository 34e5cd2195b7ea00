//===- CudaSerialize.cpp - Generated CUDA kernels to code objects ---------===//
//
// The one translation unit that pulls in MLIR's LLVM IR translation and
// NVVM target headers (heavy), besides the pass that builds the kernels.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaSerialize.h"
#include "codegen/Passes.h"
#include "codegen/cuda/CudaTargets.h"
#include "codegen/cuda/NvJitLink.h"
#include "codegen/cuda/Nvrtc.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace ingot::codegen {
namespace {

/// Code objects start 64-byte aligned in the section, as the loaders of
/// both vendors are happiest with.
void append(std::vector<uint8_t> *section, const uint8_t *data, size_t size,
            CodeObject *object) {
  section->resize((section->size() + 63) / 64 * 64, 0);
  object->offset = section->size();
  object->bytes = size;
  section->insert(section->end(), data, data + size);
}

int smNumber(const std::string &arch) {
  return arch.size() > 3 ? std::atoi(arch.c_str() + 3) : 0;
}

/// One launch dictionary (symbol, block, grid_operand, args and optionally
/// grid) as a kernel-table entry of step `index`.
Status tableEntry(DictionaryAttr launch, uint32_t index, GpuKernel *k) {
  auto symbol = launch.getAs<SymbolRefAttr>("symbol");
  auto block = launch.getAs<IntegerAttr>("block");
  auto gridOperand = launch.getAs<IntegerAttr>("grid_operand");
  auto args = launch.getAs<DenseI64ArrayAttr>("args");
  auto grid = launch.getAs<DenseI64ArrayAttr>("grid");
  if (!symbol || !block || !gridOperand || !args || args.size() % 3 ||
      (grid && (grid.size() % 3 || grid.size() > 9)))
    return Status::error("malformed");
  k->step = index;
  k->symbol = symbol.getLeafReference().str();
  k->blockX = static_cast<uint32_t>(block.getInt());
  k->gridOperand = static_cast<uint32_t>(gridOperand.getInt());
  ArrayRef<int64_t> a = args.asArrayRef();
  for (size_t i = 0; i < a.size(); i += 3)
    k->args.push_back({GpuArg::Kind(a[i]), static_cast<uint32_t>(a[i + 1]),
                       static_cast<uint32_t>(a[i + 2])});
  if (grid)
    for (size_t i = 0; i < grid.size(); i += 3)
      k->grid.push_back(
          {grid[i] < 0 ? GpuGridDim::kGridConstant : uint32_t(grid[i]),
           uint64_t(grid[i + 1]), uint32_t(grid[i + 2])});
  return Status::ok();
}

/// The kernel table from the steps' ingot.cuda_kernel attributes (one
/// launch dictionary, or a list of them in launch order), in the order the
/// artifact writer numbers steps (the function's plan.kernels); and the
/// template instances' source, in the same order.
Status kernelTable(ModuleOp module, GpuTarget *target, std::string *source) {
  uint32_t step = 0;
  Status status = Status::ok();
  module.walk([&](plan::KernelOp kernel) {
    const uint32_t index = step++;
    Attribute attr = kernel->getAttr(kCudaKernelAttr);
    if (!attr || !status)
      return;
    SmallVector<DictionaryAttr> launches;
    if (auto one = dyn_cast<DictionaryAttr>(attr))
      launches.push_back(one);
    else if (auto list = dyn_cast<ArrayAttr>(attr))
      for (Attribute a : list)
        launches.push_back(dyn_cast<DictionaryAttr>(a));
    for (DictionaryAttr launch : launches) {
      GpuKernel &k = target->kernels.emplace_back();
      if (!launch || !tableEntry(launch, index, &k)) {
        status = Status::error("step '" + kernel.getOrigin().str() +
                               "': malformed " + kCudaKernelAttr);
        return;
      }
    }
    if (auto text = kernel->getAttrOfType<StringAttr>(kCudaSourceAttr))
      *source += text.str() + "\n";
  });
  return status;
}

/// The generated kernels of gpu.module @ingot_cuda as PTX per chip.
Status generatedPtx(ModuleOp module, gpu::GPUModuleOp gpuModule,
                    std::map<std::string, std::string> *ptxByArch) {
  // MLIR links libdevice from the toolkit it is given and, without one,
  // leaves the math functions as unresolved calls: check it is there.
  const std::string toolkit = cudaToolkitRoot();
  const std::string libdevice = toolkit + "/nvvm/libdevice/libdevice.10.bc";
  if (!llvm::sys::fs::exists(libdevice))
    return Status::error("--target cuda needs the CUDA toolkit's libdevice "
                         "for the math functions; " +
                         libdevice +
                         " not found (install the toolkit or set CUDA_HOME)");
  PassManager pm(module.getContext());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa"; // PTX; cubins come from nvJitLink
  toBinary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  if (failed(pm.run(module)))
    return Status::error("lowering the CUDA kernels to PTX failed");
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kCudaModuleName);
  if (!binary)
    return Status::error("lowering the CUDA kernels gave no gpu.binary");
  for (Attribute a : binary.getObjects()) {
    auto object = cast<gpu::ObjectAttr>(a);
    auto nvvm = cast<NVVM::NVVMTargetAttr>(object.getTarget());
    (*ptxByArch)[nvvm.getChip().str()] = object.getObject().str();
  }
  return Status::ok();
}

/// The translation unit NVRTC compiles: every template header, then the
/// steps' wrappers.
std::string templateUnit(const std::string &wrappers) {
  std::string unit;
  for (const auto &[name, text] : cudaKernelTemplateHeaders())
    unit += "#include \"" + name + "\"\n";
  return unit + wrappers;
}

} // namespace

void registerCudaCodegen(DialectRegistry &registry) {
  registry
      .insert<gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect,
              arith::ArithDialect, math::MathDialect, cf::ControlFlowDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
}

Status serializeCudaKernels(ModuleOp module,
                            const std::vector<std::string> &archs,
                            GpuTarget *target, std::vector<uint8_t> *section) {
  target->name = "cuda";
  std::string wrappers;
  if (Status s = kernelTable(module, target, &wrappers); !s)
    return s;
  std::map<std::string, std::string> generated;
  if (auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kCudaModuleName))
    if (Status s = generatedPtx(module, gpuModule, &generated); !s)
      return s;
  if (generated.empty() && wrappers.empty()) {
    target->kernels.clear();
    return Status::ok();
  }
  std::vector<std::string> sorted = archs;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const std::string &x, const std::string &y) {
                     return smNumber(x) < smNumber(y);
                   });
  const std::string unit = wrappers.empty() ? "" : templateUnit(wrappers);
  std::vector<std::string> newestPtx;
  for (const std::string &arch : sorted) {
    std::vector<std::string> ptxs;
    if (auto it = generated.find(arch); it != generated.end())
      ptxs.push_back(it->second);
    if (!unit.empty()) {
      std::string ptx;
      if (Status s =
              compileCudaToPtx(unit, cudaKernelTemplateHeaders(), arch, &ptx);
          !s)
        return s;
      ptxs.push_back(std::move(ptx));
    }
    std::vector<uint8_t> cubin;
    if (Status s = linkPtxsToCubin(ptxs, arch, &cubin); !s)
      return s;
    CodeObject &object = target->objects.emplace_back();
    object.arch = arch;
    object.format = CodeObject::Format::Cubin;
    append(section, cubin.data(), cubin.size(), &object);
    newestPtx = std::move(ptxs);
  }
  for (const std::string &ptx : newestPtx) {
    CodeObject &object = target->objects.emplace_back();
    object.arch = sorted.back();
    object.format = CodeObject::Format::Ptx;
    append(section, reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size(),
           &object);
  }
  return Status::ok();
}

} // namespace ingot::codegen
