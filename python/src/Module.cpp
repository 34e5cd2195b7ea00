//===- Module.cpp - The ingot._ingot extension module ---------------------===//
#include "Bindings.h"

PYBIND11_MODULE(_ingot, m) {
  using namespace ingot::python;
  m.doc() = "ingot's runtime (and compiler, when built with it) for Python";
  py::register_exception<IngotError>(m, "Error", PyExc_RuntimeError);
  bindEngine(m);
  bindArtifact(m);
  bindCompile(m);
}
