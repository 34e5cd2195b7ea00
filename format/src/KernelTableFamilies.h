//===- KernelTableFamilies.h - The table's entries, by family ---*- C++ -*-===//
//
// One function per family of kernels, each in KernelTableGraph.cpp or
// KernelTableLlm.cpp; KernelTable.cpp calls them all.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/KernelTable.h"

#include <vector>

namespace ingot::kernel_table {

void addFusedElementwiseSpecs(std::vector<KernelSpec> &table);
void addLinearSpecs(std::vector<KernelSpec> &table);
void addLlmActivationSpecs(std::vector<KernelSpec> &table);
void addLlmNormSpecs(std::vector<KernelSpec> &table);
void addMatMulSpecs(std::vector<KernelSpec> &table);
void addNormalizationSpecs(std::vector<KernelSpec> &table);
void addPagedAttentionSpecs(std::vector<KernelSpec> &table);
void addDenseAttentionSpecs(std::vector<KernelSpec> &table);
void addRopeSpecs(std::vector<KernelSpec> &table);
void addConvSpecs(std::vector<KernelSpec> &table);
void addControlFlowSpecs(std::vector<KernelSpec> &table);
void addPoolSpecs(std::vector<KernelSpec> &table);
void addConversionSpecs(std::vector<KernelSpec> &table);
void addDataMovementSpecs(std::vector<KernelSpec> &table);
void addElementwiseSpecs(std::vector<KernelSpec> &table);
void addMathCoverageSpecs(std::vector<KernelSpec> &table);
void addMathReduceSpecs(std::vector<KernelSpec> &table);
void addReduceSpecs(std::vector<KernelSpec> &table);
void addTensorIndexSpecs(std::vector<KernelSpec> &table);
void addTensorCoverageSpecs(std::vector<KernelSpec> &table);
void addResizeSpecs(std::vector<KernelSpec> &table);
void addTensorSliceSpecs(std::vector<KernelSpec> &table);
void addTransposeSpecs(std::vector<KernelSpec> &table);
void addUnarySpecs(std::vector<KernelSpec> &table);
} // namespace ingot::kernel_table
