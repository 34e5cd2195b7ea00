//===- IngotTensorOps.td - Coverage ops (tensor) -----------------*- tablegen -*-===//
//
// Included from IngotOps.td.
//
//===----------------------------------------------------------------------===//
