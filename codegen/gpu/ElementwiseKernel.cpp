//===- ElementwiseKernel.cpp - gpu.func for an elementwise plan step ------===//
//
// Operands are raw `!llvm.ptr`s rather than memrefs: the runtime passes one
// device address per buffer and the kernel indexes it with the sizes the
// manifest tells the runtime to pass, so no memref descriptor crosses the
// launch boundary.
//
//===----------------------------------------------------------------------===//
#include "codegen/gpu/ElementwiseKernel.h"
#include "codegen/gpu/FusedProgramEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace ingot::codegen {
namespace {

/// Scalar: one element in total. Dense: the output's static shape, or the
/// only input (the output is its broadcast to itself), so every element
/// is read at the output's index. Anything else (dynamic dims next to
/// other inputs, broadcasting) is indexed through strides known at launch.
InputAccess accessOf(MemRefType in, MemRefType out, bool onlyInput) {
  if (in.hasStaticShape() && in.getNumElements() == 1)
    return InputAccess::Scalar;
  if (onlyInput || (in.hasStaticShape() && in.getShape() == out.getShape()))
    return InputAccess::Dense;
  return InputAccess::Strided;
}

struct KernelSignature {
  std::vector<InputAccess> access;
  std::vector<GpuArgSpec> args;
  SmallVector<Type> types;
  int64_t rank = 0;
  int64_t strided = 0;
};

KernelSignature signatureOf(plan::KernelOp step, MLIRContext *ctx) {
  KernelSignature sig;
  auto out = cast<MemRefType>(step.getOuts()[0].getType());
  const int64_t n = step.getIns().size();
  sig.rank = out.getRank();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  for (int64_t k = 0; k <= n; ++k) {
    sig.args.push_back({GpuArgKind::Pointer, k});
    sig.types.push_back(ptr);
  }
  sig.args.push_back({GpuArgKind::Numel, n});
  sig.types.push_back(i64);
  for (Value in : step.getIns()) {
    sig.access.push_back(accessOf(cast<MemRefType>(in.getType()), out, n == 1));
    sig.strided += sig.access.back() == InputAccess::Strided;
  }
  if (sig.strided == 0)
    return sig;
  for (int64_t a = 0; a < sig.rank; ++a) {
    sig.args.push_back({GpuArgKind::Dim, n, a});
    sig.types.push_back(i64);
  }
  for (int64_t k = 0; k < n; ++k)
    if (sig.access[k] == InputAccess::Strided)
      for (int64_t a = 0; a < sig.rank; ++a) {
        sig.args.push_back({GpuArgKind::BroadcastStride, k, a});
        sig.types.push_back(i64);
      }
  return sig;
}

/// The output coordinates of linear index `i` (row-major over `dims`).
SmallVector<Value> coordinates(OpBuilder &b, Location loc, Value i,
                               ArrayRef<Value> dims) {
  SmallVector<Value> coords(dims.size());
  Value rest = i;
  for (size_t a = dims.size(); a-- > 1;) {
    coords[a] = arith::RemUIOp::create(b, loc, rest, dims[a]);
    rest = arith::DivUIOp::create(b, loc, rest, dims[a]);
  }
  if (!dims.empty())
    coords[0] = rest;
  return coords;
}

Value loadF32(OpBuilder &b, Location loc, Value base, Value index) {
  Type f32 = b.getF32Type();
  Value p =
      LLVM::GEPOp::create(b, loc, base.getType(), f32, base, ValueRange{index});
  return LLVM::LoadOp::create(b, loc, f32, p);
}

/// The kernel body inside `if (i < numel)`: load, compute, store.
void emitElement(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
                 const KernelSignature &sig, const fused::Program &program,
                 Value i) {
  const size_t n = sig.access.size();
  auto arg = [&](size_t k) { return func.getArgument(k); };
  const size_t dimsAt = n + 2;
  SmallVector<Value> dims, coords;
  if (sig.strided) {
    for (int64_t a = 0; a < sig.rank; ++a)
      dims.push_back(arg(dimsAt + a));
    coords = coordinates(b, loc, i, dims);
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  SmallVector<Value> values;
  size_t strideAt = dimsAt + sig.rank;
  for (size_t k = 0; k < n; ++k) {
    Value index = i;
    if (sig.access[k] == InputAccess::Scalar) {
      index = zero;
    } else if (sig.access[k] == InputAccess::Strided) {
      index = zero;
      for (int64_t a = 0; a < sig.rank; ++a) {
        Value term = arith::MulIOp::create(b, loc, coords[a], arg(strideAt++));
        index = arith::AddIOp::create(b, loc, index, term);
      }
    }
    values.push_back(loadF32(b, loc, arg(k), index));
  }
  Value result = emitProgram(b, loc, program, values);
  Value out = LLVM::GEPOp::create(b, loc, arg(n).getType(), b.getF32Type(),
                                  arg(n), ValueRange{i});
  LLVM::StoreOp::create(b, loc, result, out);
}

} // namespace

ElementwiseLaunch buildElementwiseKernel(OpBuilder &b, gpu::GPUModuleOp module,
                                         plan::KernelOp step,
                                         const fused::Program &program,
                                         const std::string &symbol,
                                         int64_t blockSize) {
  MLIRContext *ctx = b.getContext();
  const KernelSignature sig = signatureOf(step, ctx);
  Location loc = step.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(b, loc, symbol,
                                     FunctionType::get(ctx, sig.types, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));

  Block &entry = func.getBody().front();
  Block *body = b.createBlock(&func.getBody());
  Block *exit = b.createBlock(&func.getBody());
  b.setInsertionPointToEnd(&entry);
  Type i64 = b.getI64Type();
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value dim = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = arith::MulIOp::create(b, loc, block, dim);
  Value index = arith::AddIOp::create(b, loc, first, thread);
  Value i = arith::IndexCastUIOp::create(b, loc, i64, index);
  Value numel = func.getArgument(step.getIns().size() + 1);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, numel);
  cf::CondBranchOp::create(b, loc, inRange, body, exit);

  b.setInsertionPointToEnd(body);
  emitElement(b, loc, func, sig, program, i);
  cf::BranchOp::create(b, loc, exit);
  b.setInsertionPointToEnd(exit);
  gpu::ReturnOp::create(b, loc);

  ElementwiseLaunch launch;
  launch.symbol = symbol;
  launch.blockSize = blockSize;
  launch.gridOperand = static_cast<int64_t>(step.getIns().size());
  launch.args = sig.args;
  return launch;
}

} // namespace ingot::codegen
