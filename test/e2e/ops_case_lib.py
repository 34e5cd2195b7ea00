"""Shared helpers of the per-family op test files (test_ops_math.py,
test_ops_norm.py, test_ops_tensor.py, test_ops_spatial.py): single-node
model builders, input generators, the per-module compile-and-run cache and
the expected-failure check. Not a test module itself."""
import numpy as np
import onnx
import pytest
from onnx import helper

from ingot_testlib import (Model, assert_clean_failure, assert_close,
                           compile_and_run,
                           compile_model, node, run_model, save_model,
                           value_info)

F32, I64, I32, BOOL = np.float32, np.int64, np.int32, np.bool_


def i64(*v):
    return np.array(v, dtype=I64)


def f32(*v):
    return np.array(v, dtype=F32)


def one(key, op, args, opset=17, sizes=({},), gen=None, outputs=("y",),
        **attrs):
    """A single-node model. args in op order: (name, dtype, shape) graph
    inputs, (name, array) initializers, or "" for an absent optional."""
    ins = [a for a in args if isinstance(a, tuple) and len(a) == 3]
    inits = {a[0]: a[1] for a in args if isinstance(a, tuple) and len(a) == 2}
    names = [a if isinstance(a, str) else a[0] for a in args]
    return Model(key, [node(op, names, list(outputs), **attrs)], ins,
                 list(outputs), inits, opset, sizes, gen or {})


def sym2(n1, n2, sym="n"):
    return ({sym: n1}, {sym: n2})


def uniform(lo, hi):
    return lambda r, s: r.uniform(lo, hi, s)


def signed(r, s):
    return r.uniform(-2, 2, s).astype(F32)


def idx_gen(lo, hi, dt=I64):
    return lambda r, s: r.integers(lo, hi, s).astype(dt)


def results_fixture():
    """A module-scoped `results` fixture: results(model) compiles and runs
    a model once per module (cases sharing a model share the run) and
    re-raises its failure for every test id that uses it."""
    cache = {}

    @pytest.fixture(scope="module")
    def results(tmp_path_factory):
        def get(model):
            if model.key not in cache:
                try:
                    cache[model.key] = compile_and_run(
                        model, tmp_path_factory.mktemp(model.key))
                except Exception as e:  # noqa: BLE001 (reported per test id)
                    cache[model.key] = e
            if isinstance(cache[model.key], Exception):
                raise cache[model.key]
            return cache[model.key]
        return get
    return results


def check_case(results, model, outputs=None):
    """Every run of `model` (per symbol binding) gives the reference's
    outputs, by name, each within assert_close's tolerance; `outputs`
    picks the ones to compare (default: all)."""
    for label, got, expected in results(model):
        assert sorted(got) == sorted(expected), (
            f"outputs {sorted(got)}, expected {sorted(expected)}")
        for name in outputs or expected:
            assert_close(got[name], expected[name], what=f"{name} ({label})")


def ms_model(nodes, inputs, outputs, inits, domain_of_ops="com.microsoft"):
    """A model that imports com.microsoft next to the default domain; output
    types are given (ONNX shape inference does not know these ops)."""
    graph = helper.make_graph(
        nodes, "ms", [value_info(*i) for i in inputs],
        [value_info(*o) for o in outputs],
        [onnx.numpy_helper.from_array(v, k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", 17)]
    if domain_of_ops:
        opsets.append(helper.make_opsetid(domain_of_ops, 1))
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def compile_error(tmp_path, model):
    """Compile a model that must be rejected; returns the compiler's stderr."""
    proc = compile_model(save_model(model, tmp_path / "bad.onnx"),
                         tmp_path / "bad.ingot", check=False)
    assert_clean_failure(proc)
    assert not (tmp_path / "bad.ingot").exists()
    return proc.stderr


def run_error(tmp_path, model, inputs):
    """Compile a model (which must succeed), run it on inputs that must be
    refused at run time; returns the run's stderr."""
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    proc = run_model(artifact, inputs, tmp_path, check=False)
    assert_clean_failure(proc)
    return proc.stderr
