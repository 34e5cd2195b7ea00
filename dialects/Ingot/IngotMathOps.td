//===- IngotMathOps.td - Coverage ops (math) -----------------*- tablegen -*-===//
//
// Included from IngotOps.td.
//
//===----------------------------------------------------------------------===//
