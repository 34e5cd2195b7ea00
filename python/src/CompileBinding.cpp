//===- CompileBinding.cpp - ingot.compile when built with the compiler ----===//
//
// The compiler's own entry point (compiler/Compiler.h), in-process; flags
// are the CLI's, spelled as Python keywords (quant="int8", group_size=64,
// max_context=2048, ...). Built without the compiler, ingot.compile raises
// and says how to get it.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#ifdef INGOT_HAS_COMPILER
#include "compiler/Compiler.h"

#include <llvm/Support/raw_ostream.h>
#endif

namespace ingot::python {

#ifdef INGOT_HAS_COMPILER
namespace {

void applyFlag(compiler::CompileOptions &o, const std::string &key,
               const py::handle &v) {
  auto integer = [&](int64_t *dest) { *dest = v.cast<int64_t>(); };
  if (key == "quant")
    o.quant = v.cast<std::string>();
  else if (key == "group_size")
    integer(&o.groupSize);
  else if (key == "quant_scheme")
    o.quantScheme = v.cast<std::string>();
  else if (key == "quant_exclude")
    o.quantExclude = v.cast<std::vector<std::string>>();
  else if (key == "quant_lm_head")
    o.quantLmHead = v.cast<std::string>();
  else if (key == "quant_embed")
    o.quantEmbed = v.cast<std::string>();
  else if (key == "act_quant")
    o.actQuant = v.cast<std::string>();
  else if (key == "block_size")
    integer(&o.blockSize);
  else if (key == "max_tokens_per_step")
    integer(&o.maxTokensPerStep);
  else if (key == "max_seqs")
    integer(&o.maxSeqs);
  else if (key == "max_context")
    integer(&o.maxContext);
  else if (key == "kv_layout")
    o.kvLayout = v.cast<std::string>();
  else if (key == "fusion")
    o.fusion = v.cast<bool>();
  else if (key == "pack_weights")
    o.packWeights = v.cast<bool>();
  else if (key == "weights") {
    const std::string w = v.cast<std::string>();
    if (w != "embedded" && w != "external")
      throw py::value_error("compile(): weights='" + w +
                            "' (expected 'embedded' or 'external')");
    o.externalWeights = w == "external";
  } else if (key == "default_max_dim")
    integer(&o.defaultMaxDim);
  else if (key == "shapes")
    o.inputShapes =
        v.cast<std::map<std::string, std::vector<int64_t>>>();
  else
    throw py::type_error("compile() got an unknown flag '" + key + "'");
}

void compile(const std::string &source, const std::string &output,
             const py::object &target, const py::kwargs &flags) {
  compiler::CompileOptions o;
  o.modelPath = source;
  o.outputPath = output;
  if (py::isinstance<py::str>(target))
    o.targets = {target.cast<std::string>()};
  else
    o.targets = target.cast<std::vector<std::string>>();
  for (auto item : flags)
    applyFlag(o, item.first.cast<std::string>(), item.second);
  Status s;
  {
    py::gil_scoped_release release;
    s = compiler::compileModel(o, llvm::nulls());
  }
  checkStatus(s);
}

} // namespace

void bindCompile(py::module_ &m) {
  m.def("_compile", &compile, py::arg("source"), py::arg("output"),
        py::arg("target") = "cpu");
  m.attr("_has_compiler") = true;
}

#else

void bindCompile(py::module_ &m) { m.attr("_has_compiler") = false; }

#endif

} // namespace ingot::python
