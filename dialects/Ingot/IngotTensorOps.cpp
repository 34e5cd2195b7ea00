//===- IngotTensorOps.cpp - Verifiers and folders of the coverage ops ------===//
#include "dialects/Ingot/IngotDialect.h"
#include "dialects/Ingot/ShapeInference.h"

using namespace mlir;
using namespace ingot::graph;
