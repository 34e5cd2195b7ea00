"""--target cuda: generated kernels in the artifact, checked without a GPU.

What a GPU-less machine can check of a CUDA build: the artifact holds a
cubin per architecture and the PTX of the newest; each cubin is an ELF for
EM_CUDA (190) of the architecture it claims, defining exactly the kernels
the manifest's table names (read here with a small ELF reader of this
tests' own, cuda_testlib.py, independent of ingot's); the build is byte-identical across
compiles and flag orders; the CPU results do not change; a damaged code
section is refused like any other. ptxas, when installed, must accept the
PTX. Language models: test_cuda_llm.py. The GPU numerics need a GPU
(scripts/gpu-check.sh)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, compile_model, describe, ingot,
                           ingot_bin, make_model, node, rand, run_model,
                           save_model, seed_for)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import transformer_block  # noqa: E402

from cuda_testlib import (EM_CUDA, F32, TARGETS, elf_kernels, have_cuda_driver,  # noqa: E402
                          inspect_json, needs_toolkit)


def gelu_bias_model():
    """Bias add (broadcast over rows), then GELU as exporters spell it."""
    rng = np.random.default_rng(11)
    inits = {"bias": rng.uniform(-1, 1, 48).astype(F32),
             "sqrt2": np.array(2 ** 0.5, F32), "one": np.array(1, F32),
             "half": np.array(0.5, F32)}
    nodes = [node("Add", ["x", "bias"], ["b"]),
             node("Div", ["b", "sqrt2"], ["d"]), node("Erf", ["d"], ["e"]),
             node("Add", ["e", "one"], ["a"]), node("Mul", ["b", "a"], ["m"]),
             node("Mul", ["m", "half"], ["y"])]
    return make_model(nodes, [("x", F32, ["batch", 48])], ["y"], inits)


@pytest.fixture(scope="module")
def gelu_onnx(tmp_path_factory):
    path = tmp_path_factory.mktemp("gelu") / "gelu.onnx"
    save_model(gelu_bias_model(), path)
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if needs_toolkit.args[0]:
        pytest.skip(needs_toolkit.kwargs["reason"])
    work = tmp_path_factory.mktemp("cuda")
    models = {"gelu": gelu_bias_model(),
              "block": transformer_block.build(seed=5)}
    out = {}
    for name, model in models.items():
        path = work / f"{name}.onnx"
        save_model(model, path)
        cpu = work / f"{name}.cpu.ingot"
        cuda = work / f"{name}.cuda.ingot"
        compile_model(path, cpu)
        proc = compile_model(path, cuda, "--target", TARGETS)
        out[name] = (path, cpu, cuda, proc)
    return work, out


def test_code_objects_per_architecture(built):
    _, out = built
    for name, (_, _, cuda, proc) in out.items():
        info = inspect_json(cuda)
        assert info["targets"] == ["cpu", "cuda:sm_80", "cuda:sm_90"]
        (target,) = info["gpu_targets"]
        assert target["name"] == "cuda"
        objects = [(o["arch"], o["format"]) for o in target["objects"]]
        # One cubin per architecture; the newest's PTX once per source
        # (generated kernels, template instances).
        assert objects[:2] == [("sm_80", "cubin"), ("sm_90", "cubin")], name
        assert objects[2:] in ([("sm_90", "ptx")], [("sm_90", "ptx")] * 2)
        assert target["kernels"], f"{name}: no step got a CUDA kernel"


def test_cubins_define_the_manifest_kernels(built, tmp_path):
    _, out = built
    for name, (_, _, cuda, _) in out.items():
        info = inspect_json(cuda)
        symbols = {k["symbol"] for k in info["gpu_targets"][0]["kernels"]}
        code = tmp_path / name
        proc = ingot("inspect", cuda, "--extract-code", code)
        assert proc.returncode == 0, describe(proc)
        for sm in (80, 90):
            data = (code / f"cuda.sm_{sm}.cubin").read_bytes()
            machine, got_sm, names = elf_kernels(data)
            assert (machine, got_sm) == (EM_CUDA, sm), name
            assert names == symbols, f"{name} sm_{sm}"
        ptx = "".join(p.read_text() for p in code.glob("cuda.sm_90*.ptx"))
        assert ".target sm_90" in ptx
        for s in symbols:
            assert f".entry {s}(" in ptx


@pytest.mark.skipif(shutil.which("ptxas") is None and
                    not Path("/usr/local/cuda/bin/ptxas").exists(),
                    reason="ptxas is not installed")
def test_ptxas_accepts_the_ptx(built, tmp_path):
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    _, out = built
    for name, (_, _, cuda, _) in out.items():
        code = tmp_path / name
        assert ingot("inspect", cuda, "--extract-code", code).returncode == 0
        for ptx in code.glob("cuda.sm_90*.ptx"):
            proc = subprocess.run([ptxas, "-arch=sm_90", str(ptx), "-o",
                                   str(tmp_path / f"{name}.cubin")],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr


def test_byte_identical_whatever_the_flag_order(built):
    work, out = built
    path, _, cuda, _ = out["gelu"]
    again = work / "gelu.again.ingot"
    compile_model(path, again, "--target", "cuda:sm_90", "--target",
                  "cuda:sm_80,cpu")
    assert again.read_bytes() == cuda.read_bytes()


def test_cpu_results_unchanged(built, tmp_path, request):
    _, out = built
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    for name, (_, cpu, cuda, _) in out.items():
        info = inspect_json(cpu)
        inputs = {}
        for io in info["inputs"]:
            shape = [d if isinstance(d, int) else 3 for d in io["shape"]]
            inputs[io["name"]] = rand(rng, shape)
        a = run_model(cpu, inputs, tmp_path)
        b = run_model(cuda, inputs, tmp_path)
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=name)


def test_damaged_code_section_is_refused(built, tmp_path):
    _, out = built
    _, _, cuda, _ = out["gelu"]
    info = inspect_json(cuda)
    (section,) = [s for s in info["sections"] if s["name"] == "code.cuda"]
    data = bytearray(cuda.read_bytes())
    data[section["offset"] + section["size"] // 2] ^= 0x40
    bad = tmp_path / "bad.ingot"
    bad.write_bytes(bytes(data))
    proc = ingot("inspect", bad)
    assert proc.returncode == 1
    assert "checksum mismatch in section 'code.cuda'" in proc.stderr


def test_cpu_only_artifact_has_no_code_to_extract(built, tmp_path):
    _, out = built
    _, cpu, _, _ = out["gelu"]
    proc = ingot("inspect", cpu, "--extract-code", tmp_path / "code")
    assert proc.returncode == 1
    assert "holds no GPU code objects" in proc.stderr


@pytest.mark.parametrize("target, message", [
    ("cuda:sm_75", "unknown CUDA architecture 'sm_75'; known: sm_80"),
    ("rocm", "target 'rocm' is not supported"),
    ("cpu,,cuda", "empty target name"),
])
def test_bad_targets_are_refused(gelu_onnx, tmp_path, target, message):
    path = gelu_onnx
    art = tmp_path / "x.ingot"
    proc = compile_model(path, art, "--target", target, check=False)
    assert proc.returncode == 1, describe(proc)
    assert message in proc.stderr
    assert not art.exists()


def test_missing_toolkit_is_named(gelu_onnx, tmp_path):
    env = dict(os.environ, CUDA_HOME=str(tmp_path / "no-cuda"))
    env.pop("LD_LIBRARY_PATH", None)
    art = tmp_path / "x.ingot"
    proc = subprocess.run([str(ingot_bin()), "compile", str(gelu_onnx), "-o",
                           str(art), "--target", "cpu,cuda"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "needs the CUDA toolkit's libdevice" in proc.stderr
    assert "set CUDA_HOME" in proc.stderr
    assert not art.exists()


@pytest.mark.skipif(have_cuda_driver(), reason="a CUDA driver is installed")
def test_device_cuda_without_a_driver_is_a_clear_error(built, tmp_path):
    _, out = built
    _, cpu, cuda, _ = out["gelu"]
    for art in (cpu, cuda):
        proc = run_model(art, {"x": np.ones((2, 48), F32)}, tmp_path,
                         check=False, extra=("--device", "cuda"))
        assert proc.returncode == 1, describe(proc)
        assert "no CUDA driver: libcuda.so.1 not found" in proc.stderr


@pytest.mark.skipif(have_cuda_driver(), reason="a CUDA driver is installed")
def test_device_auto_falls_back_to_the_cpu_and_says_so(built, tmp_path):
    _, out = built
    _, cpu, cuda, _ = out["gelu"]
    x = {"x": rand(np.random.default_rng(7), (5, 48))}
    proc = run_model(cuda, x, tmp_path, check=False, extra=("--device", "auto"))
    assert proc.returncode == 0, describe(proc)
    assert ("ingot: running on the CPU: no CUDA driver: libcuda.so.1 not found"
            in proc.stderr)
    quiet = run_model(cpu, x, tmp_path, check=False)
    assert quiet.returncode == 0 and "running on" not in quiet.stderr


def test_device_flag_is_checked(built, tmp_path):
    _, out = built
    proc = run_model(out["gelu"][1], {"x": np.ones((2, 48), F32)}, tmp_path,
                     check=False, extra=("--device", "gpu"))
    assert proc.returncode == 2, describe(proc)
    assert "--device gpu: expected cpu, cuda, cuda:N or auto" in proc.stderr
