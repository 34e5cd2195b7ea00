"""Shared helpers for ingot's end-to-end tests.

The tests drive the real command-line tools as subprocesses, exactly as a user
would: build an ONNX model with onnx.helper, `ingot compile` it, `ingot run`
it on .npy inputs, and compare the outputs with onnxruntime running the same
model. The tools are found through INGOT_BUILD_DIR (set by ctest; defaults to
<repo>/build): the full CLI and `ingot-opt` in bin/, the LLVM-free CLI in
runtime-only/bin/.
"""
import json
import os
import subprocess
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

SOURCE_DIR = Path(os.environ.get("INGOT_SOURCE_DIR",
                                 Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("INGOT_BUILD_DIR", SOURCE_DIR / "build"))

# A compile of a small model takes well under a second; these limits only
# keep a hung process from wedging the whole suite.
COMPILE_TIMEOUT_S = 300
RUN_TIMEOUT_S = 120

# onnxruntime 1.32 loads IR versions 8 to 13 with any opset 13-24; models
# get the lowest IR version their opset allows (at least 8), as exporters do.
MIN_IR_VERSION = 8


# -----------------------------------------------------------------------------
# Locating the tools
# -----------------------------------------------------------------------------

def _tool(path, how_to_build):
    assert path.is_file() and os.access(path, os.X_OK), (
        f"{path} not found; build it first ({how_to_build})")
    return path


def ingot_bin(runtime_only=False):
    """The `ingot` CLI: the full build, or the LLVM-free runtime-only one."""
    if runtime_only:
        return _tool(BUILD_DIR / "runtime-only" / "bin" / "ingot",
                     "make build-runtime-only")
    return _tool(BUILD_DIR / "bin" / "ingot", "make build")


def ingot_opt_bin():
    return _tool(BUILD_DIR / "bin" / "ingot-opt", "make build")


def ingot(*args, runtime_only=False, timeout=RUN_TIMEOUT_S):
    """Runs `ingot ARGS...`; returns the CompletedProcess (text mode)."""
    cmd = [str(ingot_bin(runtime_only))] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def describe(proc):
    """The command, exit code and output of a process, for failure messages."""
    return (f"$ {' '.join(proc.args)}\nexit code: {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n"
            f"--- stderr ---\n{proc.stderr[-4000:]}")


def assert_clean_failure(proc):
    """A failed command must exit with exactly 1 (not a signal, not 0)."""
    assert proc.returncode == 1, "expected exit code 1\n" + describe(proc)
    assert proc.stderr.strip(), "expected an error message\n" + describe(proc)


# -----------------------------------------------------------------------------
# Building ONNX models
# -----------------------------------------------------------------------------

def value_info(name, dtype, shape):
    """A typed graph input/output. shape entries: int, str (dim_param) or
    None (unknown); shape None means unknown rank."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, initializers=(), opset=17,
               check=True, name="ingot_test"):
    """Builds a ModelProto.

    inputs: (name, dtype, shape) triples. outputs: names, whose types and
    shapes come from ONNX shape inference (as an exporter would write them),
    or (name, dtype, shape) triples (needed with check=False, e.g. for a
    made-up op). initializers: name -> numpy array, or TensorProtos. With
    check, the model must pass onnx.checker's full check.
    """
    inits = [t if isinstance(t, onnx.TensorProto)
             else onnx.numpy_helper.from_array(np.asarray(t[1]), t[0])
             for t in (initializers.items() if isinstance(initializers, dict)
                       else initializers)]
    outs = [value_info(*o) if isinstance(o, tuple)
            else helper.make_value_info(o, onnx.TypeProto()) for o in outputs]
    graph = helper.make_graph(list(nodes), name,
                              [value_info(*i) for i in inputs], outs, inits)
    opsets = [helper.make_opsetid("", opset)]
    ir = max(MIN_IR_VERSION, helper.find_min_ir_version_for(opsets))
    model = helper.make_model(graph, opset_imports=opsets, ir_version=ir,
                              producer_name="ingot-e2e")
    if check:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        typed = {o.name: o for o in inferred.graph.output}
        for i, o in enumerate(model.graph.output):
            if not o.type.HasField("tensor_type"):
                model.graph.output[i].CopyFrom(typed[o.name])
        onnx.checker.check_model(model, full_check=True)
    return model


def node(op_type, inputs, outputs, name=None, **attrs):
    """helper.make_node with a default node name (diagnostics name nodes)."""
    return helper.make_node(op_type, list(inputs), list(outputs),
                            name=name or f"{op_type.lower()}_{outputs[0]}",
                            **attrs)


def save_model(model, path):
    path = Path(path)
    onnx.save(model, str(path))
    return path


# -----------------------------------------------------------------------------
# Inputs
# -----------------------------------------------------------------------------

def seed_for(test_id):
    """A stable per-test seed derived from the pytest node id."""
    return zlib.crc32(test_id.encode())


def rand(rng, shape, dtype=np.float32, low=0.1, high=2.0, positive=False):
    """Random values that are never zero: magnitude in [low, high) with a
    random sign (always + if positive). Integers get magnitudes 1..9, bools
    are uniform."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    sign = 1 if positive else rng.choice(np.array([-1, 1]), size=shape)
    if np.issubdtype(dtype, np.integer):
        return np.asarray(rng.integers(1, 10, size=shape) * sign, dtype)
    return np.asarray(rng.uniform(low, high, size=shape) * sign, dtype)


# -----------------------------------------------------------------------------
# Compiling and running
# -----------------------------------------------------------------------------

def compile_model(model_path, out_path, *extra_args, check=True):
    """`ingot compile MODEL -o OUT [extra]`; asserts success when check."""
    proc = ingot("compile", model_path, "-o", out_path, *extra_args,
                 timeout=COMPILE_TIMEOUT_S)
    if check:
        assert proc.returncode == 0, "compile failed\n" + describe(proc)
        assert Path(out_path).is_file(), (
            "no artifact written\n" + describe(proc))
    return proc


def compile_hf_models(models, out_dir, *flags):
    """Compiles each {name: HF directory} into out_dir/NAME.ingot with
    `flags`, asserting success; returns {name: artifact path}."""
    built = {}
    for name, path in models.items():
        art = Path(out_dir) / f"{name}.ingot"
        proc = ingot("compile", path, "-o", art, *flags, timeout=300)
        assert proc.returncode == 0, describe(proc)
        built[name] = art
    return built


def write_inputs(inputs, directory):
    """Saves name -> array as .npy files; returns the `--input NAME=FILE`
    arguments for them."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    args = []
    for i, (name, value) in enumerate(inputs.items()):
        f = directory / f"input{i}.npy"
        np.save(f, value)
        args += ["--input", f"{name}={f}"]
    return args


def read_outputs(directory):
    return {f.stem: np.load(f) for f in sorted(Path(directory).glob("*.npy"))}


_run_counter = [0]


def run_model(artifact, inputs, workdir, threads=None, runtime_only=False,
              check=True, extra=()):
    """`ingot run` on name -> array inputs (and `extra` flags); returns
    name -> array outputs (every .npy the run wrote), or the
    CompletedProcess when check=False."""
    _run_counter[0] += 1
    work = Path(workdir) / f"run{_run_counter[0]}"
    out_dir = work / "out"
    args = write_inputs(inputs, work / "in")
    if threads is not None:
        args += ["--threads", threads]
    proc = ingot("run", artifact, *args, "--output-dir", out_dir, *extra,
                 runtime_only=runtime_only)
    if not check:
        return proc
    assert proc.returncode == 0, "run failed\n" + describe(proc)
    return read_outputs(out_dir)


def ort_run(model, inputs):
    """Reference outputs from onnxruntime (CPU, graph optimisations off so
    every ONNX op is computed as written). model: ModelProto or path."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    src = model.SerializeToString() if isinstance(model, onnx.ModelProto) \
        else str(model)
    sess = ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


# -----------------------------------------------------------------------------
# Comparing
# -----------------------------------------------------------------------------

# Floats are compared by norm-wise relative error
#     ||actual - expected||_2 / max(||expected||_2, tiny)
# computed in float64 over the finite entries (inf/nan must sit at the same
# places with the same sign). A norm-wise measure does not blow up on the
# odd element that happens to be near zero, yet one wrong element in a
# thousand still moves it by ~3e-2.
#
# Why 1e-5 for float32: the unit roundoff is 2^-24 ~ 6e-8. Each op here
# rounds once or twice on O(1) data; reductions (matmul over K <= 256,
# softmax, layer norm) may sum in a different order than onnxruntime, which
# for random data adds error growing like sqrt(K) * 6e-8 ~ 1e-6 in the worst
# case here. A chain of ~20 such ops (the transformer block) stays a few
# 1e-6 at most (measured: ~2e-7 for the block, both against onnxruntime and
# against a float64 numpy reference), so 1e-5 passes every correct
# implementation with margin, while any real bug (wrong index, axis,
# broadcast, an epsilon that matters, a missing term) gives 1e-3 and up.
F32_RTOL = 1e-5
_TINY = np.finfo(np.float64).tiny


def relative_error(actual, expected):
    """Norm-wise relative error over the finite entries, in float64."""
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(expected, dtype=np.float64)
    finite = np.isfinite(b)
    diff = np.linalg.norm(a[finite] - b[finite])
    return float(diff / max(np.linalg.norm(b[finite]), _TINY))


def assert_close(actual, expected, rtol=F32_RTOL, what="output"):
    """Same dtype and shape; floats within rtol (see above), everything
    else (ints, bools) exactly equal."""
    assert isinstance(actual, np.ndarray), f"{what}: not an array"
    assert actual.dtype == expected.dtype, (
        f"{what}: dtype {actual.dtype}, expected {expected.dtype}")
    assert actual.shape == expected.shape, (
        f"{what}: shape {actual.shape}, expected {expected.shape}")
    if np.issubdtype(expected.dtype, np.floating):
        for kind, test in (("nan", np.isnan), ("+inf", np.isposinf),
                           ("-inf", np.isneginf)):
            assert np.array_equal(test(actual), test(expected)), (
                f"{what}: {kind} at different places: "
                f"{np.argwhere(test(actual) != test(expected))[:5].tolist()}")
        err = relative_error(actual, expected)
        finite = np.isfinite(expected)
        diff = np.abs(actual[finite].astype(np.float64) - expected[finite])
        assert err <= rtol, (
            f"{what}: relative error {err:.3g} > {rtol:g} "
            f"(max abs diff {diff.max(initial=0):.3g})")
    else:
        bad = np.argwhere(actual != expected)
        assert bad.size == 0, (
            f"{what}: {len(bad)} of {expected.size} elements differ, first "
            f"at {bad[0].tolist()}: {actual[tuple(bad[0])]!r} vs "
            f"{expected[tuple(bad[0])]!r}")


def inputs_label(inputs):
    """'x[2, 7, 64], mask[7]': which run a failure message is about."""
    return ", ".join(f"{n}{list(v.shape)}" for n, v in inputs.items())


def assert_outputs_close(actual, expected, rtol=F32_RTOL, label=""):
    """Both dicts name -> array; the same output names, each close."""
    assert sorted(actual) == sorted(expected), (
        f"outputs {sorted(actual)}, expected {sorted(expected)}")
    for name in expected:
        assert_close(actual[name], expected[name], rtol,
                     what=f"{name} ({label})" if label else name)


def check_against_ort(model, input_sets, tmp_path, compile_args=(),
                      rtol=F32_RTOL):
    """Compiles model once, runs every input set through ingot and
    onnxruntime and compares. Returns the artifact path."""
    model_path = save_model(model, tmp_path / "model.onnx")
    artifact = tmp_path / "model.ingot"
    compile_model(model_path, artifact, *compile_args)
    for inputs in input_sets:
        got = run_model(artifact, inputs, tmp_path)
        assert_outputs_close(got, ort_run(model, inputs), rtol,
                             inputs_label(inputs))
    return artifact


@dataclass
class Model:
    """A test graph plus the symbol values to run it at: one artifact,
    one run per entry of sizes."""
    key: str                          # unique; seeds the inputs
    nodes: list
    inputs: list                      # (name, dtype, shape with str symbols)
    outputs: list
    inits: dict = field(default_factory=dict)
    opset: int = 17
    sizes: tuple = ({},)              # one run per dict of symbol values
    gen: dict = field(default_factory=dict)  # name -> f(rng, dims)

    def input_sets(self, rng):
        for sizes in self.sizes:
            feed = {}
            for name, dtype, shape in self.inputs:
                dims = [sizes[d] if isinstance(d, str) else d for d in shape]
                g = self.gen.get(name)
                feed[name] = (np.asarray(g(rng, dims), dtype) if g
                              else rand(rng, dims, dtype))
            yield feed


def compile_and_run(model, work):
    """Compiles a Model once and runs each input set through ingot and
    onnxruntime: [(inputs label, ingot outputs, onnxruntime outputs)]."""
    onnx_model = make_model(model.nodes, model.inputs, model.outputs,
                            model.inits, model.opset, name=model.key)
    artifact = work / "model.ingot"
    compile_model(save_model(onnx_model, work / "model.onnx"), artifact)
    rng = np.random.default_rng(seed_for(model.key))
    runs = []
    for feed in model.input_sets(rng):
        runs.append((inputs_label(feed), run_model(artifact, feed, work),
                     ort_run(onnx_model, feed)))
    return runs


def kernels_of(artifact):
    """The kernel name of every step, from `ingot inspect --json`."""
    proc = ingot("inspect", artifact, "--json")
    assert proc.returncode == 0, describe(proc)
    return [s["kernel"] for s in json.loads(proc.stdout)["steps"]]


def per_run_kernels(artifact):
    """The kernels of the steps every run does: those reading an input,
    transitively (the others read weights alone and run once)."""
    proc = ingot("inspect", artifact, "--json")
    assert proc.returncode == 0, describe(proc)
    plan = json.loads(proc.stdout)
    per_run, live = [], {i["buffer"] for i in plan["inputs"]}
    for s in plan["steps"]:
        if live & set(s["inputs"]):
            per_run.append(s["kernel"])
            live |= set(s["outputs"])
    return per_run


def compile_both(model_path, tmp_path, *extra):
    fused, unfused = tmp_path / "fused.ingot", tmp_path / "unfused.ingot"
    compile_model(model_path, fused, *extra)
    compile_model(model_path, unfused, "--fusion=off", *extra)
    return fused, unfused
