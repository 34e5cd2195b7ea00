"""Discovery and case generation for the ONNX node-test suite
(onnx_node_suite.py, which runs and compares the cases): the suite's
configuration, finding the node tests (shipped data directory or generated
in memory), selecting those whose ops the ingot binary claims, and making
the dynamic-shape variant of a test's model.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

SOURCE_DIR = Path(os.environ.get("INGOT_SOURCE_DIR",
                                 Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("INGOT_BUILD_DIR", SOURCE_DIR / "build"))
XFAIL_FILE = Path(__file__).resolve().with_name("onnx_node_suite_xfail.txt")

# The tolerances onnx's own backend runner applies to node tests
# (onnx.backend.test.case.node.expect records rtol=1e-3, atol=1e-7 for every
# case); integers, bools and strings must match exactly.
RTOL = 1e-3
ATOL = 1e-7

# Two workers: the suite must not starve the other ctest jobs on a 2-core
# machine, and each compile is single-threaded anyway.
WORKERS = 2
COMPILE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 60


STATIC, DYNAMIC = "static", "dynamic"
VARIANTS = (STATIC, DYNAMIC)
DEFAULT_DOMAINS = ("", "ai.onnx")


# -----------------------------------------------------------------------------
# Discovering the node tests
# -----------------------------------------------------------------------------

@dataclass
class NodeTest:
    """One node test: its model and its (inputs, expected outputs) data
    sets, values as ndarrays or TensorProtos (sequence/optional values stay
    in whatever form onnx gives them; they are reported, not run)."""
    name: str
    model: onnx.ModelProto
    data_sets: list = field(default_factory=list)


def node_data_dir():
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def _numbered(directory, prefix):
    """input_0.pb, input_1.pb, ... in numeric (not lexical) order."""
    files = directory.glob(f"{prefix}_*.pb")
    return sorted(files, key=lambda f: int(f.stem.split("_")[-1]))


def _load_value(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return tensor


def _tests_from_directory(root):
    tests = []
    for test_dir in sorted(root.glob("test_*")):
        model_file = test_dir / "model.onnx"
        if not model_file.is_file():
            continue
        model = onnx.load(str(model_file))
        data_sets = []
        for ds in sorted(test_dir.glob("test_data_set_*")):
            data_sets.append(
                ([_load_value(f) for f in _numbered(ds, "input")],
                 [_load_value(f) for f in _numbered(ds, "output")]))
        tests.append(NodeTest(test_dir.name, model, data_sets))
    return tests


def _tests_from_generators():
    """The cases onnx writes into data/node, built in memory. Seeded so the
    random inputs (and hence the rounding behaviour) are the same on every
    run: a test must not flip between pass and fail by chance."""
    from onnx.backend.test.case import node as node_cases

    state = np.random.get_state()
    np.random.seed(0)
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow in cast test data
            cases = node_cases.collect_testcases()
    finally:
        np.random.set_state(state)
    return [NodeTest(c.name, c.model, [(list(i), list(o)) for i, o
                                       in c.data_sets])
            for c in cases if c.kind == "node" and c.model is not None]


def discover_node_tests():
    """Every node test of the installed onnx package, sorted by name."""
    root = node_data_dir()
    tests = _tests_from_directory(root) if root.is_dir() else []
    if not tests:
        tests = _tests_from_generators()
    return sorted(tests, key=lambda t: t.name)


# -----------------------------------------------------------------------------
# What ingot claims
# -----------------------------------------------------------------------------

def ingot_bin(build_dir=None):
    path = Path(build_dir or BUILD_DIR) / "bin" / "ingot"
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise FileNotFoundError(f"{path} not found; build it first "
                                "(cmake --build build --target ingot)")
    return path


def list_onnx_ops(ingot):
    """The importer's registry: [{"op", "domain", "min_opset",
    "max_opset"}], straight from the binary so nothing can drift."""
    proc = subprocess.run([str(ingot), "compile", "--list-onnx-ops"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError("ingot compile --list-onnx-ops failed:\n"
                           + proc.stderr)
    ops = json.loads(proc.stdout)
    for op in ops:
        op.setdefault("domain", "")
        if op["domain"] == "ai.onnx":
            op["domain"] = ""
    return ops


def _normal_domain(domain):
    return "" if domain in DEFAULT_DOMAINS else domain


def _all_nodes(graph):
    """The graph's nodes and those of every subgraph attribute (If, Loop,
    Scan bodies): a body op ingot does not know makes the test unclaimed."""
    for n in graph.node:
        yield n
        for attr in n.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _all_nodes(g)


def ops_used(model):
    """Sorted (domain, op type, opset) triples the model's nodes use. The
    opset is that of the default ONNX domain the model imports, for every
    node: the registry's opset ranges are stated in those terms (see
    OpConverter in compiler/onnx/OnnxImportContext.h), also for ops of
    other domains such as com.microsoft."""
    opsets = {_normal_domain(o.domain): o.version for o in model.opset_import}
    opset = opsets.get("", -1)
    return sorted({(_normal_domain(n.domain), n.op_type, opset)
                   for n in _all_nodes(model.graph)})


def is_claimed(triple, claims):
    domain, op, opset = triple
    return any(c["op"] == op and c["domain"] == domain
               and c["min_opset"] <= opset <= c["max_opset"] for c in claims)


def select_claimed(tests, claims):
    """The tests whose every (domain, op, opset) ingot claims to handle."""
    return [t for t in tests
            if all(is_claimed(u, claims) for u in ops_used(t.model))]


# -----------------------------------------------------------------------------
# The dynamic variant
# -----------------------------------------------------------------------------

def _graph_inputs(model):
    """The inputs the caller feeds, in order (not initializers)."""
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def make_dynamic(model, data_sets):
    """A copy of model with every dim of every tensor graph input turned
    into its own dim_param (d<input>_<axis>), and the sizes each symbol takes
    in the data sets. None when no input has a dim (nothing to vary).

    Each dim gets a distinct symbol, as onnx-mlir's dynamic runs do: the
    compiler may not assume that two equal-sized dims are the same one.
    value_info is dropped, since its static intermediate shapes would
    contradict the now-dynamic inputs."""
    dyn = onnx.ModelProto()
    dyn.CopyFrom(model)
    del dyn.graph.value_info[:]
    sizes = {}
    inputs = _graph_inputs(dyn)
    for i, inp in enumerate(inputs):
        if not inp.type.HasField("tensor_type"):
            continue
        shape = inp.type.tensor_type.shape
        if not inp.type.tensor_type.HasField("shape"):
            continue
        for axis, dim in enumerate(shape.dim):
            symbol = f"d{i}_{axis}"
            dim.Clear()
            dim.dim_param = symbol
            sizes[symbol] = 0
            for ins, _ in data_sets:
                if i < len(ins):
                    arr = to_array(ins[i])
                    if axis < arr.ndim:
                        sizes[symbol] = max(sizes[symbol], arr.shape[axis])
    return (dyn, sizes) if sizes else None


def dynamic_bound(sizes):
    """The --max-dim given to every symbol of a dynamic variant: twice the
    largest actual size (at least 2).

    Why not the default bound (512): ingot sizes its activation arena for
    the symbols' maxima, so a 4-D input would ask for 512^4 elements and a
    rank-7 one cannot even be described; the runs would measure memory, not
    dynamic-shape handling. Why headroom: running below the bounds is what
    catches code that silently assumes the maximum (strides, loop trip
    counts). Why one bound for all symbols: independent symbols that
    broadcast against each other must agree at their maxima too."""
    return max(2, 2 * max(sizes.values(), default=1))


# -----------------------------------------------------------------------------
# A test's values as arrays
# -----------------------------------------------------------------------------

class UnsupportedValue(Exception):
    """A data-set value that is not a plain tensor (sequence, map,
    optional): ingot's CLI feeds .npy tensors only."""


def to_array(value):
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, (np.generic, int, float, bool)):
        return np.asarray(value)
    raise UnsupportedValue(
        f"{type(value).__name__} value (sequence/map/optional types)")
