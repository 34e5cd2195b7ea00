//===- KernelTable.cpp - Assembling and looking up the kernel table -------===//
#include "ingot/KernelTable.h"

#include "KernelTableFamilies.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ingot {
namespace {

std::vector<KernelSpec> buildTable() {
  using namespace kernel_table;
  std::vector<KernelSpec> table;
  addFusedElementwiseSpecs(table);
  addLinearSpecs(table);
  addLlmActivationSpecs(table);
  addLlmNormSpecs(table);
  addMatMulSpecs(table);
  addNormalizationSpecs(table);
  addPagedAttentionSpecs(table);
  addDenseAttentionSpecs(table);
  addRopeSpecs(table);
  addConvSpecs(table);
  addControlFlowSpecs(table);
  addPoolSpecs(table);
  addConversionSpecs(table);
  addDataMovementSpecs(table);
  addElementwiseSpecs(table);
  addMathCoverageSpecs(table);
  addMathReduceSpecs(table);
  addReduceSpecs(table);
  addTensorIndexSpecs(table);
  addTensorCoverageSpecs(table);
  addResizeSpecs(table);
  addTensorSliceSpecs(table);
  addTransposeSpecs(table);
  addUnarySpecs(table);
  std::sort(table.begin(), table.end(),
            [](const KernelSpec &a, const KernelSpec &b) {
              return std::strcmp(a.name, b.name) < 0;
            });
  return table;
}

} // namespace

const std::vector<KernelSpec> &kernelTable() {
  static const std::vector<KernelSpec> table = buildTable();
  return table;
}

const KernelSpec *findKernelSpec(std::string_view name) {
  const std::vector<KernelSpec> &table = kernelTable();
  auto it = std::lower_bound(
      table.begin(), table.end(), name,
      [](const KernelSpec &k, std::string_view n) { return k.name < n; });
  return it != table.end() && it->name == name ? &*it : nullptr;
}

} // namespace ingot
