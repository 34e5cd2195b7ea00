//===- Bindings.h - Pieces of the ingot Python module -----------*- C++ -*-===//
#pragma once

#include "ingot/Status.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>

namespace ingot::python {

namespace py = pybind11;

/// ingot's errors become Python exceptions (ingot.Error) carrying the
/// message unchanged.
struct IngotError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void checkStatus(const Status &s, const std::string &prefix = "") {
  if (!s)
    throw IngotError(prefix + s.message());
}

void bindEngine(py::module_ &m);   // EngineBinding.cpp
void bindArtifact(py::module_ &m); // ArtifactBinding.cpp
void bindCompile(py::module_ &m);  // CompileBinding.cpp

} // namespace ingot::python
