//===- ArtifactBinding.cpp - ingot._Artifact: run a compiled graph --------===//
//
// Artifact.run({name: ndarray}) -> {name: ndarray} for artifacts compiled
// from ONNX graphs. Inputs are checked here for dtype (no silent casts: a
// float64 array for a float32 input is refused) and by the executor for
// shape; arrays are copied in and out, never aliased.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "ingot/Artifact.h"
#include "ingot/Executor.h"
#include "ingot/ThreadPool.h"

#include <cstring>
#include <mutex>

namespace ingot::python {
namespace {

/// numpy's dtype.str without byte order ("f4", "i8", "b1", ...).
std::string numpyCode(DType t) {
  switch (t) {
  case DType::F32: return "f4";
  case DType::F16: return "f2";
  case DType::F64: return "f8";
  case DType::I64: return "i8";
  case DType::I32: return "i4";
  case DType::I8: return "i1";
  case DType::U8: return "u1";
  case DType::I16:
    return "i2";
  case DType::U16:
    return "u2";
  case DType::U32:
    return "u4";
  case DType::U64:
    return "u8";
  case DType::Bool: return "b1";
  default: return "";
  }
}

HostTensor tensorFrom(const std::string &name, const IoSpec &spec,
                      const py::array &array) {
  std::string want = numpyCode(spec.dtype);
  std::string got = std::string(1, array.dtype().kind()) +
                    std::to_string(array.dtype().itemsize());
  if (want.empty())
    throw IngotError("input '" + name + "' has dtype " +
                     dtypeName(spec.dtype) + ", which numpy cannot hold");
  if (got != want)
    throw IngotError("input '" + name + "': expected dtype " +
                     dtypeName(spec.dtype) + ", got numpy " +
                     py::str(array.dtype()).cast<std::string>());
  py::array c = py::array::ensure(array, py::array::c_style);
  HostTensor t;
  t.dtype = spec.dtype;
  for (py::ssize_t i = 0; i < c.ndim(); ++i)
    t.shape.push_back(int64_t(c.shape(i)));
  t.data.resize(size_t(c.nbytes()));
  std::memcpy(t.data.data(), c.data(), t.data.size());
  return t;
}

py::array arrayFrom(const HostTensor &t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  std::string code = numpyCode(t.dtype);
  if (code.empty())
    throw IngotError(std::string("an output has dtype ") + dtypeName(t.dtype) +
                     ", which numpy cannot hold");
  py::array out(py::dtype(code), shape);
  std::memcpy(out.mutable_data(), t.data.data(), t.data.size());
  return out;
}

class PyArtifact {
public:
  PyArtifact(const std::string &path, unsigned threads) : pool_(threads) {
    checkStatus(Artifact::open(path, &artifact_));
    executor_ = std::make_unique<Executor>(*artifact_, pool_);
  }

  py::dict run(const py::dict &inputs) {
    const Manifest &m = artifact_->manifest();
    if (m.hasLlm)
      throw IngotError(artifact_->path() + ": an LLM artifact; use "
                                           "ingot.Engine to generate with it");
    std::vector<NamedTensor> named;
    for (auto item : inputs) {
      std::string name = item.first.cast<std::string>();
      const IoSpec *spec = nullptr;
      for (const IoSpec &s : m.inputs)
        spec = s.name == name ? &s : spec;
      if (!spec)
        throw IngotError("the model has no input '" + name + "'");
      named.push_back({name, tensorFrom(name, *spec,
                                        py::array::ensure(item.second))});
    }
    std::vector<NamedTensor> outputs;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_); // one run at a time
      checkStatus(executor_->run(named, &outputs), artifact_->path() + ": ");
    }
    py::dict out;
    for (const NamedTensor &t : outputs)
      out[py::str(t.name)] = arrayFrom(t.tensor);
    return out;
  }

  py::list ioNames(bool inputs) const {
    py::list l;
    for (const IoSpec &s : inputs ? artifact_->manifest().inputs
                                  : artifact_->manifest().outputs)
      l.append(s.name);
    return l;
  }

private:
  ThreadPool pool_;
  std::unique_ptr<Artifact> artifact_;
  std::unique_ptr<Executor> executor_;
  std::mutex mu_;
};

} // namespace

void bindArtifact(py::module_ &m) {
  py::class_<PyArtifact>(m, "_Artifact")
      .def(py::init<const std::string &, unsigned>())
      .def("run", &PyArtifact::run)
      .def_property_readonly("input_names",
                             [](const PyArtifact &a) { return a.ioNames(true); })
      .def_property_readonly("output_names", [](const PyArtifact &a) {
        return a.ioNames(false);
      });
}

} // namespace ingot::python
