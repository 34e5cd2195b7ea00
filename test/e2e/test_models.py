"""Multi-op models through ingot, against onnxruntime: an MLP and a pre-norm
transformer block (test/fixtures/transformer_block.py) with symbolic batch
and sequence length, its external-data variants, its memory plan, and the
runtime-only CLI running what the full build compiled."""
import json
import math
import shutil
import sys

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, assert_clean_failure, assert_close,
                           assert_outputs_close, check_against_ort,
                           compile_model, describe, ingot, make_model, node,
                           ort_run, run_model, seed_for)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import transformer_block  # noqa: E402

F32 = np.float32
# Bounds for the block's symbols: small enough that the arena stays a few
# MiB, and exercised exactly at the bound by the last size below.
BLOCK_BOUNDS = ["--max-dim", "batch=4", "--max-dim", "seq=32"]
BLOCK_SIZES = [(1, 1), (1, 7), (2, 16), (3, 5), (4, 32)]


def block_input(test_id, batch, seq):
    rng = np.random.default_rng(seed_for(f"{test_id}/{batch}x{seq}"))
    x = rng.standard_normal((batch, seq, transformer_block.D_MODEL))
    return {"x": x.astype(F32)}


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    """The transformer block and its artifact, compiled once."""
    work = tmp_path_factory.mktemp("block")
    model = transformer_block.build(seed=0)
    path = transformer_block.save(model, work / "block.onnx")
    artifact = work / "block.ingot"
    compile_model(path, artifact, *BLOCK_BOUNDS)
    return model, artifact


# -- MLP ----------------------------------------------------------------------
def mlp_model():
    """Gemm(transB) -> Relu -> MatMul+Add -> GELU(Erf) -> Gemm -> Sigmoid,
    on x [batch, 32] with batch symbolic."""
    rng = np.random.default_rng(7)
    w = {"w1": rng.standard_normal((48, 32)) / math.sqrt(32),
         "b1": 0.1 * rng.standard_normal(48),
         "w2": rng.standard_normal((48, 64)) / math.sqrt(48),
         "b2": 0.1 * rng.standard_normal(64),
         "w3": rng.standard_normal((64, 16)) / math.sqrt(64),
         "b3": 0.1 * rng.standard_normal((1, 16)),
         "half": 0.5, "one": 1.0, "inv_sqrt2": 1 / math.sqrt(2)}
    nodes = [
        node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1),
        node("Relu", ["h1"], ["r1"]),
        node("MatMul", ["r1", "w2"], ["m2"]),
        node("Add", ["m2", "b2"], ["h2"]),
        node("Mul", ["h2", "inv_sqrt2"], ["g_in"]),
        node("Erf", ["g_in"], ["g_erf"]),
        node("Add", ["g_erf", "one"], ["g1"]),
        node("Mul", ["h2", "half"], ["g_half"]),
        node("Mul", ["g_half", "g1"], ["gelu"]),
        node("Gemm", ["gelu", "w3", "b3"], ["h3"], alpha=0.75, beta=1.5),
        node("Sigmoid", ["h3"], ["y"])]
    inits = {k: np.asarray(v, F32) for k, v in w.items()}
    return make_model(nodes, [("x", F32, ["batch", 32])], ["y"], inits,
                      opset=13)


def test_mlp_several_batch_sizes(tmp_path, request):
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    sets = [{"x": rng.standard_normal((b, 32)).astype(F32)}
            for b in (1, 5, 33)]
    check_against_ort(mlp_model(), sets, tmp_path)


# -- Transformer block --------------------------------------------------------
@pytest.mark.parametrize("batch,seq", BLOCK_SIZES,
                         ids=[f"batch{b}-seq{s}" for b, s in BLOCK_SIZES])
def test_transformer_block(block, batch, seq, tmp_path, request):
    """One artifact, many (batch, seq): the causal mask and head reshapes
    follow the runtime shape."""
    model, artifact = block
    feed = block_input(request.node.nodeid, batch, seq)
    got = run_model(artifact, feed, tmp_path)
    assert_outputs_close(got, ort_run(model, feed))


@pytest.mark.parametrize("mode", ["one-file", "per-tensor"])
def test_transformer_block_external_data(mode, tmp_path, request):
    """Weights read from ONNX external data end up in the artifact: it runs
    correctly after the .onnx and its data files are gone."""
    model = transformer_block.build(seed=3)
    src = tmp_path / "src"
    path = transformer_block.save(model, src / "block.onnx",
                                  external_data=mode)
    assert len(list(src.iterdir())) > 1, "expected external data files"
    artifact = tmp_path / "block.ingot"
    compile_model(path, artifact, *BLOCK_BOUNDS)
    shutil.rmtree(src)
    feed = block_input(request.node.nodeid, 2, 9)
    assert_outputs_close(run_model(artifact, feed, tmp_path),
                         ort_run(model, feed))


@pytest.mark.parametrize("threads", [1, 2])
def test_transformer_block_threads(block, threads, tmp_path, request):
    model, artifact = block
    feed = block_input(request.node.nodeid, 3, 17)
    got = run_model(artifact, feed, tmp_path, threads=threads)
    assert_outputs_close(got, ort_run(model, feed))


# -- Memory plan --------------------------------------------------------------
def test_transformer_block_memory_plan(block):
    """The arena is within 10% of the peak of simultaneously live bytes, and
    never more than giving every buffer its own space."""
    model, artifact = block
    proc = ingot("inspect", artifact, "--json")
    assert proc.returncode == 0, describe(proc)
    mem = json.loads(proc.stdout)["memory"]
    arena, lower, naive = (mem["arena_bytes"], mem["arena_lower_bound_bytes"],
                           mem["arena_naive_bytes"])
    # However ops are fused, the MLP hidden activation [batch, seq, d_ff]
    # at the compiled bounds (4, 32) has to exist at some point.
    hidden_bytes = 4 * 32 * transformer_block.D_FF * 4
    assert lower >= hidden_bytes, mem
    assert arena <= 1.1 * lower, mem
    assert arena <= naive, mem
    weight_bytes = sum(4 * math.prod(t.dims) for t in model.graph.initializer
                       if t.data_type == 1)
    assert mem["weights_bytes"] >= weight_bytes, mem


# -- Runtime-only CLI ---------------------------------------------------------
def test_runtime_only_cli_runs_compiled_artifact(block, tmp_path, request):
    """The LLVM-free `ingot` gives bit-identical outputs on the same
    artifact."""
    model, artifact = block
    feed = block_input(request.node.nodeid, 2, 11)
    full = run_model(artifact, feed, tmp_path)
    lean = run_model(artifact, feed, tmp_path, runtime_only=True)
    assert sorted(lean) == sorted(full) == ["y"]
    assert lean["y"].dtype == full["y"].dtype
    assert np.array_equal(lean["y"], full["y"]), (
        "runtime-only output differs from the full build's")
    assert_close(full["y"], ort_run(model, feed)["y"])


def test_runtime_only_cli_refuses_to_compile(block, tmp_path):
    model, _ = block
    path = transformer_block.save(model, tmp_path / "block.onnx")
    out = tmp_path / "block.ingot"
    proc = ingot("compile", path, "-o", out, runtime_only=True)
    assert_clean_failure(proc)
    assert "compiler" in proc.stderr, describe(proc)
    assert not out.exists()
