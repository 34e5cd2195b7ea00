"""The `ingot` CLI's promises: clear errors with exit code 1 (never a crash,
never a half-written artifact), validation of what it is given to run,
deterministic output, and the phase IR that `--compile-to` and `--dump-ir`
expose."""
import json
import re
import sys
import subprocess

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, assert_clean_failure, assert_close,
                           compile_model, describe, ingot, ingot_opt_bin,
                           make_model, node, ort_run, run_model, save_model)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import transformer_block  # noqa: E402

F32 = np.float32
PROBE_WEIGHT = np.linspace(-1, 1, 16 * 64, dtype=F32).reshape(16, 64)
# The bias is the tensor whose bytes the corruption tests look for in the
# artifact: an elementwise operand has no reason to be re-laid out.
PROBE_BIAS = np.linspace(-1.5, 1.5, 64, dtype=F32)


def probe_model():
    """y = Relu(probe_input @ probe_weight + probe_bias), probe_input
    [rows, 16]."""
    return make_model(
        [node("MatMul", ["probe_input", "probe_weight"], ["m"],
              name="probe/matmul"),
         node("Add", ["m", "probe_bias"], ["a"], name="probe/add"),
         node("Relu", ["a"], ["y"], name="probe/relu")],
        [("probe_input", F32, ["rows", 16])], ["y"],
        {"probe_weight": PROBE_WEIGHT, "probe_bias": PROBE_BIAS})


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The probe model compiled with rows <= 8: (model, artifact path)."""
    work = tmp_path_factory.mktemp("probe")
    model = probe_model()
    artifact = work / "probe.ingot"
    compile_model(save_model(model, work / "probe.onnx"), artifact,
                  "--max-dim", "rows=8")
    return model, artifact


def mentions(text, needle):
    """needle (a str or regex) occurs in text; numbers must stand alone and
    outside file paths (a temp path can contain any digits)."""
    if isinstance(needle, re.Pattern):
        return bool(needle.search(text))
    if needle.isdigit():
        return bool(re.search(rf"(?<!\d){needle}(?!\d)",
                              re.sub(r"\S*/\S*", "", text)))
    return needle.lower() in text.lower()


def expect_compile_error(model_path, tmp_path, *needles):
    """Compile fails with exit 1, names each needle, and writes nothing."""
    out = tmp_path / "out.ingot"
    proc = ingot("compile", model_path, "-o", out)
    assert_clean_failure(proc)
    for needle in needles:
        assert mentions(proc.stderr, needle), (
            f"stderr should mention {needle!r}\n" + describe(proc))
    assert not out.exists(), "a failed compile left an artifact behind"
    return proc


# -- Compile errors -----------------------------------------------------------
def grid_sample_model(node_name="blk3/gs"):
    """GridSample (opset 16): a real ONNX op that ingot does not support."""
    return make_model([node("GridSample", ["img", "grid"], ["y"],
                            name=node_name)],
                      [("img", F32, [1, 1, 4, 4]),
                       ("grid", F32, [1, 2, 2, 2])], ["y"], opset=16)


def test_unsupported_op_names_node_op_and_opset(tmp_path):
    expect_compile_error(save_model(grid_sample_model(), tmp_path / "m.onnx"),
                         tmp_path, "GridSample", "blk3/gs",
                         re.compile(r"opset\D{0,3}16"))


def test_made_up_op_names_node_op_and_opset(tmp_path):
    model = make_model(
        [node("Relu", ["x"], ["r"]),
         node("FrobnicateTensor", ["r"], ["y"], name="layer0/frob")],
        [("x", F32, [4])], [("y", F32, [4])], opset=19, check=False)
    expect_compile_error(save_model(model, tmp_path / "m.onnx"), tmp_path,
                         "FrobnicateTensor", "layer0/frob",
                         re.compile(r"opset\D{0,3}19"))


def test_failed_compile_keeps_existing_output(tmp_path):
    model = grid_sample_model()
    out = tmp_path / "precious.ingot"
    out.write_bytes(b"an artifact the user wants to keep")
    proc = ingot("compile", save_model(model, tmp_path / "m.onnx"), "-o", out)
    assert_clean_failure(proc)
    assert out.read_bytes() == b"an artifact the user wants to keep"


@pytest.mark.parametrize("kind", ["garbage", "truncated", "missing"])
def test_broken_onnx_file_is_named(kind, tmp_path):
    path = tmp_path / f"broken_{kind}.onnx"
    if kind == "garbage":
        path.write_bytes(b"this is not an ONNX model\x00\xff\xfe" * 20)
    elif kind == "truncated":  # cut inside the weights' raw bytes
        whole = transformer_block.build().SerializeToString()
        path.write_bytes(whole[:len(whole) // 2])
    expect_compile_error(path, tmp_path, path.name)


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_broken_external_data_is_named(damage, tmp_path):
    path = transformer_block.save(transformer_block.build(),
                                  tmp_path / "block.onnx",
                                  external_data="one-file")
    data = tmp_path / "block.weights"
    if damage == "missing":
        data.unlink()
    else:
        data.write_bytes(data.read_bytes()[:1000])
    expect_compile_error(path, tmp_path, data.name)


@pytest.mark.parametrize("dtype,names", [(np.complex64, ("complex64",)),
                                         (np.complex128, ("complex128",))])
def test_unsupported_dtype_is_named(dtype, names, tmp_path):
    model = make_model([node("Identity", ["a"], ["y"])],
                       [("a", dtype, [3])], ["y"])
    proc = expect_compile_error(save_model(model, tmp_path / "m.onnx"),
                                tmp_path)
    assert any(n in proc.stderr.lower() for n in names), (
        f"stderr should name the dtype ({' or '.join(names)})\n"
        + describe(proc))


# -- Run-time input validation ------------------------------------------------
def run_probe(artifact, tmp_path, **inputs):
    return run_model(artifact, inputs, tmp_path, check=False)


@pytest.mark.parametrize("case", [
    "wrong_name", "missing_input", "wrong_dtype", "wrong_rank",
    "wrong_fixed_dim", "symbol_over_bound"])
def test_bad_inputs_are_explained(case, probe, tmp_path):
    _, artifact = probe
    x = np.ones((3, 16), F32)
    inputs, needles = {
        "wrong_name": ({"probe_inptu": x}, ["probe_input", "float32"]),
        "missing_input": ({}, ["probe_input"]),
        "wrong_dtype": ({"probe_input": x.astype(np.float64)},
                        ["probe_input", "float32", "float64"]),
        "wrong_rank": ({"probe_input": np.ones(16, F32)}, ["probe_input"]),
        "wrong_fixed_dim": ({"probe_input": np.ones((3, 15), F32)},
                            ["probe_input", "16"]),
        "symbol_over_bound": ({"probe_input": np.ones((9, 16), F32)},
                              ["rows", "8"]),
    }[case]
    proc = run_probe(artifact, tmp_path, **inputs)
    assert_clean_failure(proc)
    for needle in needles:
        assert mentions(proc.stderr, needle), (
            f"stderr should mention {needle!r}\n" + describe(proc))


def test_symbol_at_its_bound_runs(probe, tmp_path):
    model, artifact = probe
    feed = {"probe_input": np.linspace(-1, 1, 8 * 16, dtype=F32)
            .reshape(8, 16)}
    assert_close(run_model(artifact, feed, tmp_path)["y"],
                 ort_run(model, feed)["y"])


def test_default_symbol_bound_is_512(tmp_path):
    model = probe_model()
    artifact = tmp_path / "probe.ingot"
    compile_model(save_model(model, tmp_path / "probe.onnx"), artifact)
    feed = {"probe_input": np.full((512, 16), 0.01, F32)}
    assert_close(run_model(artifact, feed, tmp_path)["y"],
                 ort_run(model, feed)["y"])
    proc = run_probe(artifact, tmp_path,
                     probe_input=np.full((513, 16), 0.01, F32))
    assert_clean_failure(proc)
    assert mentions(proc.stderr, "rows"), describe(proc)
    assert mentions(proc.stderr, "512"), describe(proc)


def test_shape_flag_fixes_input_shape(tmp_path):
    model = probe_model()
    artifact = tmp_path / "probe.ingot"
    compile_model(save_model(model, tmp_path / "probe.onnx"), artifact,
                  "--target", "cpu", "--shape", "probe_input=3x16")
    feed = {"probe_input": np.linspace(-2, 2, 48, dtype=F32).reshape(3, 16)}
    assert_close(run_model(artifact, feed, tmp_path)["y"],
                 ort_run(model, feed)["y"])
    assert_clean_failure(run_probe(artifact, tmp_path,
                                   probe_input=np.ones((4, 16), F32)))


def test_unreadable_npy_is_named(probe, tmp_path):
    _, artifact = probe
    bad = tmp_path / "not_really.npy"
    bad.write_bytes(b"\x93NUMPY garbage")
    proc = ingot("run", artifact, "--input", f"probe_input={bad}",
                 "--output-dir", tmp_path / "out")
    assert_clean_failure(proc)
    assert bad.name in proc.stderr, describe(proc)


# -- Corrupt and truncated artifacts ------------------------------------------
def _find(data, needle):
    at = data.find(needle)
    assert at >= 0, f"{needle[:24]!r}... not found in the artifact"
    return at


WEIGHT_BYTES = PROBE_BIAS.tobytes()
CORRUPTIONS = {  # name -> f(artifact bytes) -> damaged bytes
    **{f"flip_header_byte{i}": (lambda i: lambda d: _flip(d, i))(i)
       for i in (0, 4, 8, 12)},
    "flip_manifest_tensor_name": lambda d: _flip(
        d, _find(d, b"probe_bias") + 3),
    "flip_manifest_input_name": lambda d: _flip(
        d, _find(d, b"probe_input") + 5),
    "flip_weights_first": lambda d: _flip(d, _find(d, WEIGHT_BYTES)),
    "flip_weights_middle": lambda d: _flip(
        d, _find(d, WEIGHT_BYTES) + len(WEIGHT_BYTES) // 2 + 1),
    "flip_weights_last": lambda d: _flip(
        d, _find(d, WEIGHT_BYTES) + len(WEIGHT_BYTES) - 1),
    **{f"truncate_to_{n}": (lambda n: lambda d: d[:n])(n)
       for n in (0, 1, 15, 64)},
    "truncate_to_half": lambda d: d[:len(d) // 2],
    "truncate_inside_weights": lambda d: d[:_find(d, WEIGHT_BYTES) + 99],
    "truncate_last_byte": lambda d: d[:-1],
}


def _flip(data, at):
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


@pytest.mark.parametrize("damage", CORRUPTIONS)
def test_damaged_artifact_is_refused(damage, probe, tmp_path):
    _, artifact = probe
    bad = tmp_path / f"{damage}.ingot"
    bad.write_bytes(CORRUPTIONS[damage](artifact.read_bytes()))
    feed = tmp_path / "x.npy"
    np.save(feed, np.ones((2, 16), F32))
    for args in (["inspect", bad, "--json"],
                 ["run", bad, "--input", f"probe_input={feed}",
                  "--output-dir", tmp_path / "out"]):
        proc = ingot(*args)
        assert_clean_failure(proc)
        assert bad.name in proc.stderr, (
            "the error should name the artifact\n" + describe(proc))


# -- Determinism, phases, inspect ---------------------------------------------
def test_compile_is_byte_identical(tmp_path):
    path = transformer_block.save(transformer_block.build(seed=5),
                                  tmp_path / "block.onnx")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "one.ingot", tmp_path / "b" / "two.ingot"
    compile_model(path, first, "--max-dim", "seq=64")
    compile_model(path, second, "--max-dim", "seq=64")
    assert first.read_bytes() == second.read_bytes()


def ingot_opt_parses(mlir_path):
    proc = subprocess.run([str(ingot_opt_bin()), str(mlir_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ingot-opt rejects {mlir_path}\n" + \
        describe(proc)


# What each phase's IR must contain: graph ops that reference weights by
# name, or the plan's kernel steps (docs/kernels.md).
PHASE_DIALECT = {"import": "ingot.param", "graph": "ingot.param",
                 "fused": "ingot.param", "quantized": "ingot.param",
                 "laid-out": "ingot.param",
                 "plan": "plan.kernel"}


def other_ops_model():
    """The ops neither the probe nor the block uses, so that together they
    print and parse every op the importer makes."""
    c = {"two": np.array(2.0, F32), "w": np.full((8, 4), 0.125, F32),
         "bias": np.arange(4, dtype=F32), "axes": np.array([1], np.int64)}
    return make_model([
        node("Exp", ["x"], ["e"]), node("Sqrt", ["e"], ["s"]),
        node("Pow", ["s", "two"], ["p"]), node("Sub", ["p", "x"], ["d0"]),
        node("Div", ["d0", "two"], ["d"]), node("Neg", ["d"], ["n"]),
        node("Tanh", ["n"], ["t"]), node("Sigmoid", ["t"], ["g"]),
        node("Relu", ["g"], ["r"]),
        node("ReduceMean", ["r", "axes"], ["m"], keepdims=1),
        node("Squeeze", ["m", "axes"], ["q"]),
        node("Identity", ["q"], ["y_mean"]),
        node("Constant", [], ["k"], value_float=0.5),
        node("Gemm", ["r", "w", "bias"], ["h"], alpha=0.5),
        node("Mul", ["h", "k"], ["y_gemm"])],
        [("x", F32, ["n", 8])], ["y_mean", "y_gemm"], c, opset=18)


IR_MODELS = {"probe": probe_model, "block": transformer_block.build,
             "other_ops": other_ops_model}


@pytest.mark.parametrize("model", IR_MODELS)
@pytest.mark.parametrize("phase", PHASE_DIALECT)
def test_compile_to_phase_prints_parsable_ir(phase, model, tmp_path):
    model_path = save_model(IR_MODELS[model](), tmp_path / f"{model}.onnx")
    out = tmp_path / f"{model}.ingot"
    proc = ingot("compile", model_path, "-o", out, f"--compile-to={phase}")
    assert proc.returncode == 0, describe(proc)
    assert PHASE_DIALECT[phase] in proc.stdout, describe(proc)
    assert not out.exists(), f"--compile-to={phase} wrote an artifact"
    ir = tmp_path / f"{phase}.mlir"
    ir.write_text(proc.stdout)
    ingot_opt_parses(ir)


def test_dump_ir_writes_one_file_per_phase(tmp_path):
    model_path = save_model(probe_model(), tmp_path / "probe.onnx")
    dump = tmp_path / "ir"
    out = tmp_path / "probe.ingot"
    compile_model(model_path, out, f"--dump-ir={dump}")
    files = sorted(dump.glob("*.mlir"))
    for phase, dialect in PHASE_DIALECT.items():
        mine = [f for f in files if phase in f.name]
        assert len(mine) == 1, f"{phase}: {[f.name for f in files]}"
        assert dialect in mine[0].read_text(), mine[0]
    for f in files:
        ingot_opt_parses(f)


def test_inspect_json(probe):
    _, artifact = probe
    proc = ingot("inspect", artifact, "--json")
    assert proc.returncode == 0, describe(proc)
    info = json.loads(proc.stdout)
    assert {"format_version", "compiler_version", "targets", "tensors",
            "steps", "buffers", "memory"} <= set(info), sorted(info)
    assert info["format_version"] == 4
    assert "cpu" in info["targets"]
    assert isinstance(info["steps"], list) and info["steps"], info["steps"]
    assert isinstance(info["tensors"], list) and info["tensors"]
    assert isinstance(info["buffers"], list) and info["buffers"]
    mem = info["memory"]
    for key in ("weights_bytes", "arena_bytes", "arena_lower_bound_bytes",
                "arena_naive_bytes", "kv_cache_bytes", "overhead_bytes"):
        assert isinstance(mem.get(key), int) and mem[key] >= 0, (key, mem)
    weights = PROBE_WEIGHT.nbytes + PROBE_BIAS.nbytes
    assert mem["weights_bytes"] >= weights, mem
