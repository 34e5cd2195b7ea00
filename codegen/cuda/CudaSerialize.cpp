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

/// The kernel table from the steps' ingot.cuda_kernel attributes, in the
/// order the artifact writer numbers steps (the function's plan.kernels).
Status kernelTable(ModuleOp module, GpuTarget *target) {
  uint32_t step = 0;
  Status status = Status::ok();
  module.walk([&](plan::KernelOp kernel) {
    const uint32_t index = step++;
    auto launch = kernel->getAttrOfType<DictionaryAttr>(kCudaKernelAttr);
    if (!launch)
      return;
    auto symbol = launch.getAs<SymbolRefAttr>("symbol");
    auto block = launch.getAs<IntegerAttr>("block");
    auto grid = launch.getAs<IntegerAttr>("grid_operand");
    auto args = launch.getAs<DenseI64ArrayAttr>("args");
    if (!symbol || !block || !grid || !args || args.size() % 3) {
      status = Status::error("step '" + kernel.getOrigin().str() +
                             "': malformed " + kCudaKernelAttr);
      return;
    }
    GpuKernel &k = target->kernels.emplace_back();
    k.step = index;
    k.symbol = symbol.getLeafReference().str();
    k.blockX = static_cast<uint32_t>(block.getInt());
    k.gridOperand = static_cast<uint32_t>(grid.getInt());
    ArrayRef<int64_t> a = args.asArrayRef();
    for (size_t i = 0; i < a.size(); i += 3)
      k.args.push_back({GpuArg::Kind(a[i]), static_cast<uint32_t>(a[i + 1]),
                        static_cast<uint32_t>(a[i + 2])});
  });
  return status;
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

Status serializeCudaKernels(ModuleOp module, GpuTarget *target,
                            std::vector<uint8_t> *section) {
  target->name = "cuda";
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kCudaModuleName);
  if (!gpuModule)
    return Status::ok();
  if (Status s = kernelTable(module, target); !s)
    return s;

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

  std::vector<std::pair<std::string, std::string>> ptxByArch;
  for (Attribute a : binary.getObjects()) {
    auto object = cast<gpu::ObjectAttr>(a);
    auto nvvm = cast<NVVM::NVVMTargetAttr>(object.getTarget());
    ptxByArch.emplace_back(nvvm.getChip().str(), object.getObject().str());
  }
  if (ptxByArch.empty())
    return Status::error("lowering the CUDA kernels gave no PTX");
  std::stable_sort(ptxByArch.begin(), ptxByArch.end(),
                   [](const auto &x, const auto &y) {
                     return smNumber(x.first) < smNumber(y.first);
                   });
  for (const auto &[arch, ptx] : ptxByArch) {
    std::vector<uint8_t> cubin;
    if (Status s = linkPtxToCubin(ptx, arch, &cubin); !s)
      return s;
    CodeObject &object = target->objects.emplace_back();
    object.arch = arch;
    object.format = CodeObject::Format::Cubin;
    append(section, cubin.data(), cubin.size(), &object);
  }
  const auto &[newest, ptx] = ptxByArch.back();
  CodeObject &object = target->objects.emplace_back();
  object.arch = newest;
  object.format = CodeObject::Format::Ptx;
  append(section, reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size(),
         &object);
  return Status::ok();
}

} // namespace ingot::codegen
