//===- OnnxRegistry.cpp - The table of supported ONNX ops -----------------===//
//
// One entry per (domain, op type): the opsets (of the default domain) it is
// converted for and its converter; entries of other domains, such as
// com.microsoft, name their domain. Converters that span a since_version change inside
// the range (ReduceMean 18, Shape 15, Reshape 14) branch on the opset
// themselves. `supportedOnnxOps()` and the generated docs read this table.
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxImportContext.h"
#include "compiler/onnx/OnnxImporter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace ingot::compiler {
namespace onnximport {
namespace {

const OpConverter kConverters[] = {
    // Elementwise (OnnxElementwise.cpp).
    {"Add", kMinOpset, kMaxOpset, convertAdd},
    {"Sub", kMinOpset, kMaxOpset, convertSub},
    {"Mul", kMinOpset, kMaxOpset, convertMul},
    {"Div", kMinOpset, kMaxOpset, convertDiv},
    {"Pow", kMinOpset, kMaxOpset, convertPow},
    {"Sqrt", kMinOpset, kMaxOpset, convertSqrt},
    {"Neg", kMinOpset, kMaxOpset, convertNeg},
    {"Exp", kMinOpset, kMaxOpset, convertExp},
    {"Erf", 9, kMaxOpset, convertErf},
    {"Tanh", kMinOpset, kMaxOpset, convertTanh},
    {"Sigmoid", kMinOpset, kMaxOpset, convertSigmoid},
    {"Relu", kMinOpset, kMaxOpset, convertRelu},
    {"Where", 9, kMaxOpset, convertWhere},
    {"IsNaN", 9, kMaxOpset, convertIsNaN},
    {"IsInf", 10, kMaxOpset, convertIsInf},
    {"Cast", kMinOpset, kMaxOpset, convertCast},
    {"CastLike", 15, kMaxOpset, convertCastLike},
    {"Swish", 24, kMaxOpset, convertSwish},
    {"Identity", kMinOpset, kMaxOpset, convertIdentity},
    // Branches (OnnxControlFlow.cpp).
    {"If", kMinOpset, kMaxOpset, convertIf},
    {"Loop", kMinOpset, kMaxOpset, convertLoop},
    {"Scan", 9, kMaxOpset, convertScan},
    // Contractions, normalisation, reductions (OnnxNnOps.cpp).
    {"MatMul", kMinOpset, kMaxOpset, convertMatMul},
    {"Gemm", kMinOpset, kMaxOpset, convertGemm},
    {"Softmax", kMinOpset, kMaxOpset, convertSoftmax},
    {"LayerNormalization", 17, kMaxOpset, convertLayerNormalization},
    {"ReduceMean", kMinOpset, kMaxOpset, convertReduceMean},
    // Data movement and shapes (OnnxShapeOps.cpp).
    {"Transpose", kMinOpset, kMaxOpset, convertTranspose},
    {"Reshape", kMinOpset, kMaxOpset, convertReshape},
    {"Squeeze", kMinOpset, kMaxOpset, convertSqueeze},
    {"Unsqueeze", kMinOpset, kMaxOpset, convertUnsqueeze},
    {"Concat", kMinOpset, kMaxOpset, convertConcat},
    {"Gather", kMinOpset, kMaxOpset, convertGather},
    {"GatherND", 11, kMaxOpset, convertGatherND},
    {"Shape", kMinOpset, kMaxOpset, convertShape},
    {"Size", kMinOpset, kMaxOpset, convertSize},
    {"Trilu", 14, kMaxOpset, convertTrilu},
    // Constants (OnnxConstantOps.cpp).
    {"Constant", kMinOpset, kMaxOpset, convertConstant},
    {"ConstantOfShape", 9, kMaxOpset, convertConstantOfShape},
};

/// The foundation table above plus the coverage tables, which live beside
/// their converters (OnnxMathOps.cpp, OnnxComposite.cpp, OnnxTensorOps.cpp,
/// OnnxQuantMicrosoft.cpp).
std::vector<OpConverter> buildTable() {
  std::vector<OpConverter> all(std::begin(kConverters), std::end(kConverters));
  for (llvm::ArrayRef<OpConverter> more :
       {mathOpConverters(), compositeOpConverters(), tensorOpConverters(),
        quantMicrosoftConverters()})
    all.insert(all.end(), more.begin(), more.end());
  return all;
}

} // namespace

llvm::ArrayRef<OpConverter> opConverters() {
  static const std::vector<OpConverter> table = buildTable();
  return table;
}

const OpConverter *findOpConverter(llvm::StringRef opType,
                                   llvm::StringRef domain) {
  if (domain == "ai.onnx")
    domain = "";
  llvm::ArrayRef<OpConverter> table = opConverters();
  const OpConverter *it = llvm::find_if(table, [&](const OpConverter &c) {
    return opType == c.opType && domain == c.domain;
  });
  return it == table.end() ? nullptr : it;
}

std::string knownOpDomains() {
  std::vector<std::string> domains;
  for (const OpConverter &c : opConverters())
    if (*c.domain && !llvm::is_contained(domains, c.domain))
      domains.push_back(c.domain);
  return llvm::join(domains, ", ");
}

} // namespace onnximport

std::vector<SupportedOnnxOp> supportedOnnxOps() {
  std::vector<SupportedOnnxOp> ops;
  for (const onnximport::OpConverter &c : onnximport::opConverters())
    ops.push_back({c.opType, c.minOpset, c.maxOpset, c.domain});
  return ops;
}

} // namespace ingot::compiler
