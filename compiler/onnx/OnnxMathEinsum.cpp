//===- OnnxMathEinsum.cpp - Einsum as transpose/matmul/reduce -------------===//
//
// Einsum is lowered at import, with no kernel of its own:
//   * one operand: sum out the letters missing from the output
//     (ingot.reduce "sum"), then transpose to the output order;
//   * two operands: sum out letters only one side has and the output
//     lacks, then classify letters as batch (both inputs and the output),
//     contracted (both inputs only), left (A and output) and right (B and
//     output); transpose A to [batch, left, k] and B to [batch, k, right],
//     matmul, and transpose the [batch, left, right] result to the output
//     order. A missing left/k/right group is a unit dim (unsqueeze), so dot
//     products ("bi,bi->b") and outer products work too.
// That covers the forms transformers use ("bij,bjk->bik", "bhid,bhjd->bhij",
// "ij,jk->ik", "bi,bi->b", "ij->ji"). More than one left, contracted or
// right letter would need a reshape that merges dims, ellipses broadcasting
// and repeated letters diagonals: those are rejected with the supported
// forms named. float32 only (matmul is).
//
//===----------------------------------------------------------------------===//
#include "compiler/onnx/OnnxMathConverters.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cctype>

using namespace mlir;

namespace ingot::compiler::onnximport {
namespace {

constexpr const char *kSupportedForms =
    "one or two operands, letters a-z/A-Z without '...' or repeats within a "
    "term, and at most one left, one contracted and one right letter "
    "besides batch letters (e.g. \"bij,bjk->bik\", \"bhid,bhjd->bhij\", "
    "\"ij,jk->ik\", \"bi,bi->b\", \"ij->ji\")";

struct Builder {
  NodeContext &n;

  FailureOr<Value> transpose(Value v, std::string &letters,
                             const std::string &order) {
    if (letters == order)
      return v;
    SmallVector<int64_t> perm;
    for (char c : order)
      perm.push_back(letters.find(c));
    letters = order;
    return n.build<graph::TransposeOp>(n.f32(), v,
                                       n.builder().getDenseI64ArrayAttr(perm));
  }
  /// Sums out every letter of `letters` that `keep` lacks.
  FailureOr<Value> sumOut(Value v, std::string &letters,
                          const std::string &keep) {
    SmallVector<int64_t> axes;
    std::string kept;
    for (size_t i = 0; i < letters.size(); ++i) {
      if (keep.find(letters[i]) == std::string::npos)
        axes.push_back(i);
      else
        kept += letters[i];
    }
    if (axes.empty())
      return v;
    letters = kept;
    OpBuilder &b = n.builder();
    return n.build<graph::ReduceOp>(n.f32(), v, Value(), b.getStringAttr("sum"),
                                    b.getDenseI64ArrayAttr(axes),
                                    b.getI64IntegerAttr(0), IntegerAttr());
  }
  template <typename OpTy>
  FailureOr<Value> axesOp(Value v, ArrayRef<int64_t> axes) {
    if (axes.empty())
      return v;
    return n.build<OpTy>(n.f32(), v, n.builder().getDenseI64ArrayAttr(axes));
  }
};

/// Letters of `s` that satisfy `pred`, in the order of `s`.
template <typename Pred> std::string pick(const std::string &s, Pred pred) {
  std::string r;
  for (char c : s)
    if (pred(c))
      r += c;
  return r;
}

bool has(const std::string &s, char c) { return s.find(c) != std::string::npos; }

LogicalResult parse(NodeContext &n, std::string eq,
                    std::vector<std::string> &terms, std::string &out) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.find("...") != std::string::npos)
    return n.fail("equation \"" + eq + "\" uses an ellipsis", kSupportedForms);
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else { // implicit output: letters seen once, alphabetically
    std::string all = llvm::join(terms, "");
    for (char c : all)
      if (std::count(all.begin(), all.end(), c) == 1)
        out += c;
    std::sort(out.begin(), out.end());
  }
  for (const std::string &t : terms) {
    std::string sorted = t;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
        !llvm::all_of(t, [](char c) { return std::isalpha(c); }))
      return n.fail("equation \"" + eq + "\" has a term '" + t +
                        "' with a repeated or invalid letter",
                    kSupportedForms);
  }
  for (char c : out)
    if (!llvm::any_of(terms, [&](const std::string &t) { return has(t, c); }))
      return n.fail("output letter '" + std::string(1, c) +
                    "' appears in no input");
  return success();
}

} // namespace

LogicalResult convertEinsum(NodeContext &n) {
  const onnx::AttributeProto *eqAttr =
      n.attr("equation", onnx::AttributeProto::STRING);
  if (!eqAttr)
    return n.ctx.hasError() ? failure() : n.fail("missing attribute 'equation'");
  std::vector<std::string> terms;
  std::string out;
  if (failed(parse(n, eqAttr->s(), terms, out)))
    return failure();
  int numInputs = n.node.input_size();
  if (numInputs != int(terms.size()) || numInputs < 1 || numInputs > 2)
    return n.fail(std::to_string(numInputs) + " operands for equation \"" +
                      eqAttr->s() + "\"",
                  kSupportedForms);
  SmallVector<Value> ins(numInputs);
  for (int i = 0; i < numInputs; ++i) {
    if (failed(n.input(i, ins[i])) ||
        failed(n.requireType(ins[i], "operand", {n.f32()})))
      return failure();
    if (cast<RankedTensorType>(ins[i].getType()).getRank() !=
        int64_t(terms[i].size()))
      return n.fail("operand " + std::to_string(i) + " has rank " +
                    std::to_string(cast<RankedTensorType>(ins[i].getType())
                                       .getRank()) +
                    " but term '" + terms[i] + "' names " +
                    std::to_string(terms[i].size()) + " dims");
  }
  Builder b{n};
  if (numInputs == 1) {
    std::string letters = terms[0];
    FailureOr<Value> v = b.sumOut(ins[0], letters, out);
    if (failed(v))
      return failure();
    return n.setOutput(0, b.transpose(*v, letters, out));
  }
  std::string la = terms[0], lb = terms[1];
  // Letters of one side that neither the other side nor the output has.
  FailureOr<Value> a = b.sumOut(ins[0], la, lb + out);
  if (failed(a))
    return failure();
  FailureOr<Value> bv = b.sumOut(ins[1], lb, la + out);
  if (failed(bv))
    return failure();
  std::string batch = pick(out, [&](char c) { return has(la, c) && has(lb, c); });
  std::string contract =
      pick(la, [&](char c) { return has(lb, c) && !has(out, c); });
  std::string left = pick(la, [&](char c) { return !has(lb, c); });
  std::string right = pick(lb, [&](char c) { return !has(la, c); });
  if (left.size() > 1 || contract.size() > 1 || right.size() > 1)
    return n.fail("equation \"" + eqAttr->s() + "\" has " +
                      std::to_string(left.size()) + " left, " +
                      std::to_string(contract.size()) + " contracted and " +
                      std::to_string(right.size()) + " right letters",
                  kSupportedForms);
  int64_t nb = batch.size();
  a = b.transpose(*a, la, batch + left + contract);
  if (failed(a))
    return failure();
  bv = b.transpose(*bv, lb, batch + contract + right);
  if (failed(bv))
    return failure();
  // Unit dims for missing groups, so both are [batch, rows, cols].
  SmallVector<int64_t> unitA, unitB, unitOut;
  if (left.empty())
    unitA.push_back(nb), unitOut.push_back(nb);
  if (contract.empty())
    unitA.push_back(nb + 1), unitB.push_back(nb);
  if (right.empty())
    unitB.push_back(nb + 1), unitOut.push_back(nb + 1);
  a = b.axesOp<graph::UnsqueezeOp>(*a, unitA);
  if (failed(a))
    return failure();
  bv = b.axesOp<graph::UnsqueezeOp>(*bv, unitB);
  if (failed(bv))
    return failure();
  FailureOr<Value> r = n.build<graph::MatMulOp>(n.f32(), *a, *bv);
  if (failed(r))
    return failure();
  r = b.axesOp<graph::SqueezeOp>(*r, unitOut);
  if (failed(r))
    return failure();
  std::string letters = batch + left + right;
  return n.setOutput(0, b.transpose(*r, letters, out));
}

} // namespace ingot::compiler::onnximport
