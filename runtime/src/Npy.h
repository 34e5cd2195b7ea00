//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The declarations are public (the CLI and tests use them): ingot/Npy.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Npy.h"
