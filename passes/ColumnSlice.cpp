//===- ColumnSlice.cpp - Last-axis slices the fusion passes make ----------===//
#include "passes/ColumnSlice.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace ingot::graph;

namespace ingot {
namespace {

/// The single value of a one-element integer constant.
std::optional<int64_t> scalarConstant(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.getValues<APInt>().begin()).getSExtValue();
}

} // namespace

std::optional<ColumnSlice> matchColumnSlice(Value v) {
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice)
    return std::nullopt;
  auto type = cast<RankedTensorType>(slice.getInput().getType());
  if (type.getRank() < 1 || type.isDynamicDim(type.getRank() - 1))
    return std::nullopt;
  std::optional<int64_t> begin = scalarConstant(slice.getStarts()),
                         end = scalarConstant(slice.getEnds()),
                         axis = scalarConstant(slice.getAxes()),
                         step = scalarConstant(slice.getSteps());
  const int64_t rank = type.getRank(), cols = type.getDimSize(rank - 1);
  if (!begin || !end || !axis || !step || *step != 1 ||
      (*axis != rank - 1 && *axis != -1) || *begin < 0 || *end > cols ||
      *begin >= *end)
    return std::nullopt;
  return ColumnSlice{slice.getInput(), *begin, *end};
}

Value makeColumnSlice(OpBuilder &b, Location loc, Value source, int64_t begin,
                      int64_t end, Type type) {
  auto vec = RankedTensorType::get({1}, b.getI64Type());
  auto constant = [&](int64_t x) {
    return ConstantOp::create(b, loc, vec,
                              DenseIntElementsAttr::get(vec, {x}));
  };
  int64_t axis = cast<RankedTensorType>(source.getType()).getRank() - 1;
  return SliceOp::create(b, loc, type, source, constant(begin),
                         constant(end), constant(axis), constant(1));
}

} // namespace ingot
