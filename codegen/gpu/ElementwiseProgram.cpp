//===- ElementwiseProgram.cpp - Which plan steps are generated ------------===//
//
// A single elementwise kernel is the one-instruction program of the same
// opcode, so one code path (and one set of per-opcode semantics, matching
// runtime/src/cpu/FusedOpcodes.cpp) covers fused and unfused steps alike.
//
//===----------------------------------------------------------------------===//
#include "codegen/gpu/ElementwiseKernel.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace ingot::codegen {
namespace {

bool isF32MemRef(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getElementType().isF32();
}

/// Kernels named like their opcode, and how many inputs they read.
int64_t plainKernelArity(StringRef kernel) {
  return llvm::StringSwitch<int64_t>(kernel)
      .Cases({"add", "sub", "mul", "div", "pow"}, 2)
      .Cases({"sqrt", "neg", "exp", "erf", "tanh", "sigmoid", "relu"}, 1)
      .Default(0);
}

std::string strArg(DictionaryAttr args, StringRef name) {
  auto s = args.getAs<StringAttr>(name);
  return s ? s.str() : std::string();
}

/// unary_math kinds with constants carry them as `alpha` (and `beta`).
bool kindConstants(DictionaryAttr args, const std::string &kind,
                   std::vector<double> *constants) {
  auto take = [&](StringRef name) {
    auto f = args.getAs<FloatAttr>(name);
    if (f)
      constants->push_back(f.getValueAsDouble());
    return bool(f);
  };
  if (kind == "leaky_relu" || kind == "elu")
    return take("alpha");
  if (kind == "hard_sigmoid")
    return take("alpha") && take("beta");
  return true;
}

} // namespace

std::optional<fused::Program> elementwiseProgram(plan::KernelOp step,
                                                 std::string *whyNot) {
  auto refuse = [&](const std::string &why) {
    *whyNot = why;
    return std::nullopt;
  };
  StringRef kernel = step.getKernel();
  if (kernel != "fused_elementwise" && kernel != "unary_math" &&
      kernel != "binary_math" && plainKernelArity(kernel) == 0)
    return refuse("not an elementwise kernel");
  if (step.getOuts().size() != 1 || !isF32MemRef(step.getOuts()[0]))
    return refuse("not one f32 output");
  for (Value in : step.getIns())
    if (!isF32MemRef(in))
      return refuse("an input is not f32");
  const int64_t n = step.getIns().size();
  DictionaryAttr args = step.getArgs();
  std::string ops;
  std::vector<int64_t> refs;
  std::vector<double> constants;
  if (kernel == "fused_elementwise") {
    if (!strArg(args, "reduce").empty())
      return refuse("reduces a row (no generated reduction kernel yet)");
    auto a = args.getAs<DenseI64ArrayAttr>("args");
    auto c = args.getAs<DenseF64ArrayAttr>("constants");
    if (!a || !c)
      return refuse("no program");
    ops = strArg(args, "ops");
    refs.assign(a.asArrayRef().begin(), a.asArrayRef().end());
    constants.assign(c.asArrayRef().begin(), c.asArrayRef().end());
  } else if (int64_t arity = plainKernelArity(kernel); arity == n) {
    ops = kernel.str();
    refs = {0, arity == 2 ? 1 : -1};
  } else if (kernel == "unary_math" && n == 1) {
    ops = strArg(args, "kind");
    if (!kindConstants(args, ops, &constants))
      return refuse("kind '" + ops + "' without its alpha/beta");
    refs = {0, constants.empty() ? -1 : 0};
  } else if (kernel == "binary_math" && n == 2 &&
             (strArg(args, "kind") == "max" || strArg(args, "kind") == "min")) {
    ops = strArg(args, "kind");
    refs = {0, 1};
  } else {
    return refuse("not an elementwise kernel");
  }
  fused::Program program;
  std::string error;
  if (!fused::parseProgram(ops, refs, constants, n, &program, &error))
    return refuse(error);
  return program;
}

} // namespace ingot::codegen
