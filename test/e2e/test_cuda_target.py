"""--target cuda: generated kernels in the artifact, checked without a GPU.

What a GPU-less machine can check of a CUDA build: the artifact holds a
cubin per architecture and the PTX of the newest; each cubin is an ELF for
EM_CUDA (190) of the architecture it claims, defining exactly the kernels
the manifest's table names (read here with a small ELF reader of this
file's own, independent of ingot's); the build is byte-identical across
compiles and flag orders; the CPU results do not change; a damaged code
section is refused like any other. ptxas, when installed, must accept the
PTX. The GPU numerics need a GPU (scripts/gpu-check.sh)."""
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, compile_model, describe, ingot,
                           ingot_bin, make_model, node, rand, run_model,
                           save_model, seed_for)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import transformer_block  # noqa: E402

F32 = np.float32
TARGETS = "cpu,cuda:sm_80,cuda:sm_90"
EM_CUDA = 190
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
# A CUDA build needs the toolkit's libdevice and nvJitLink (not a GPU).
needs_toolkit = pytest.mark.skipif(
    not (CUDA_HOME / "nvvm/libdevice/libdevice.10.bc").exists()
    or not list((CUDA_HOME / "lib64").glob("libnvJitLink.so*")),
    reason=f"no CUDA toolkit at {CUDA_HOME}")


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


def elf_kernels(data):
    """(e_machine, sm number, global function names) of a 64-bit ELF."""
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF"
    abi_version = data[8]
    machine, = struct.unpack_from("<H", data, 18)
    flags, = struct.unpack_from("<I", data, 48)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    names = set()
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            name, info, _, shndx = struct.unpack_from("<IBBH", data, off)
            if info >> 4 == 1 and info & 0xF == 2 and shndx != 0:
                end = data.index(b"\0", strtab[4] + name)
                names.add(data[strtab[4] + name:end].decode())
    # CUDA 12.8+ writes ELF ABI version 8 with the SM number in bits 8-15.
    sm = (flags >> 8) & 0xFF if abi_version >= 8 else flags & 0xFF
    return machine, sm, names


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


def inspect_json(art):
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


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


@needs_toolkit
@pytest.mark.parametrize("arch", ["llama", "mistral", "phi3"])
def test_every_llm_step_gets_a_kernel(arch, tmp_path):
    """Llama-, Mistral- (sliding window) and Phi3-shaped (fused qkv) HF
    models in f32: every step of the plan has CUDA launches (paged attention
    two: write the cache, then attend), and each cubin defines exactly the
    table's kernels."""
    model = hf_models.make_model(arch, tmp_path)
    art = tmp_path / "llm.ingot"
    proc = ingot("compile", model, "-o", art, "--target", "cpu,cuda:sm_80,"
                 "cuda:sm_90,cuda:sm_100", timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert "CUDA kernels for" not in proc.stderr, proc.stderr  # all covered
    info = inspect_json(art)
    (target,) = info["gpu_targets"]
    kernels = target["kernels"]
    steps = info["steps"]
    assert sorted({k["step"] for k in kernels}) == list(range(len(steps)))
    for i, step in enumerate(steps):
        launches = [k for k in kernels if k["step"] == i]
        want = 2 if step["kernel"].endswith("paged_attention") else 1
        assert len(launches) == want, (i, step["kernel"])
    symbols = {k["symbol"] for k in kernels}
    code = tmp_path / "code"
    assert ingot("inspect", art, "--extract-code", code).returncode == 0
    for sm in (80, 90, 100):
        machine, got_sm, names = elf_kernels(
            (code / f"cuda.sm_{sm}.cubin").read_bytes())
        assert (machine, got_sm) == (EM_CUDA, sm)
        assert names == symbols, f"sm_{sm}"


@needs_toolkit
@pytest.mark.parametrize("arch, flags", [
    ("qwen2", ()),                      # f16 weights and biases
    ("llama_tied_bf16", ()),            # bf16, tied embeddings
    ("llama", ("--quant", "int8")),     # q8 blocks
    ("llama", ("--quant", "int4", "--quant-scheme", "asym")),  # q4m
    ("llama", ("--quant", "int4", "--quant-scheme", "sym")),   # q4
])
def test_16_bit_and_quantised_models_are_covered(arch, flags, tmp_path):
    """16-bit checkpoints (embedding rows kept 16-bit, then a cast) and
    q8/q4/q4m weights (decoded in registers) get a kernel for every step."""
    model = hf_models.make_model(arch, tmp_path)
    art = tmp_path / "m.ingot"
    proc = ingot("compile", model, "-o", art, *flags, "--target",
                 "cpu,cuda:sm_90", timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert "CUDA kernels for" not in proc.stderr, proc.stderr
    info = inspect_json(art)
    covered = {k["step"] for k in info["gpu_targets"][0]["kernels"]}
    assert covered == set(range(len(info["steps"])))


@needs_toolkit
def test_fp8_linears_are_not_covered_and_the_compile_says_so(tmp_path):
    """fp8 weights keep an f32 memref type in the plan and no template
    decodes e4m3 yet, so their linears must stay on the CPU (a float
    template on those bytes would be a silent wrong answer)."""
    model = hf_models.make_model("llama", tmp_path)
    art = tmp_path / "f8.ingot"
    proc = ingot("compile", model, "-o", art, "--quant", "fp8", "--target",
                 "cpu,cuda:sm_90", timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert "the first without one: 'linear'" in proc.stderr, proc.stderr
    info = inspect_json(art)
    linears = {i for i, s in enumerate(info["steps"]) if s["kernel"] == "linear"}
    covered = {k["step"] for k in info["gpu_targets"][0]["kernels"]}
    assert not linears & covered


@needs_toolkit
def test_llm_cuda_build_is_byte_identical(tmp_path):
    model = hf_models.make_model("llama", tmp_path)
    arts = [tmp_path / "a.ingot", tmp_path / "b.ingot"]
    for art in arts:
        proc = ingot("compile", model, "-o", art, "--target", "cpu,cuda:sm_90",
                     timeout=600)
        assert proc.returncode == 0, describe(proc)
    assert arts[0].read_bytes() == arts[1].read_bytes()


def _have_cuda_driver():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(_have_cuda_driver(), reason="a CUDA driver is installed")
def test_device_cuda_without_a_driver_is_a_clear_error(built, tmp_path):
    _, out = built
    _, cpu, cuda, _ = out["gelu"]
    for art in (cpu, cuda):
        proc = run_model(art, {"x": np.ones((2, 48), F32)}, tmp_path,
                         check=False, extra=("--device", "cuda"))
        assert proc.returncode == 1, describe(proc)
        assert "no CUDA driver: libcuda.so.1 not found" in proc.stderr


@pytest.mark.skipif(_have_cuda_driver(), reason="a CUDA driver is installed")
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


@pytest.fixture(scope="module")
def llm_cuda(tmp_path_factory):
    if needs_toolkit.args[0]:
        pytest.skip(needs_toolkit.kwargs["reason"])
    work = tmp_path_factory.mktemp("llm_cuda")
    model = hf_models.make_model("llama", work)
    cpu, cuda = work / "cpu.ingot", work / "cuda.ingot"
    for art, target in ((cpu, "cpu"), (cuda, "cpu,cuda:sm_90")):
        proc = ingot("compile", model, "-o", art, "--target", target,
                     timeout=600)
        assert proc.returncode == 0, describe(proc)
    return work, cpu, cuda


@pytest.mark.skipif(_have_cuda_driver(), reason="a CUDA driver is installed")
@pytest.mark.parametrize("extra", [(), ("--batch-file",)])
def test_generate_on_cuda_without_a_driver_is_a_clear_error(llm_cuda, extra):
    work, _, cuda = llm_cuda
    args = ["generate", cuda, "--device", "cuda", "--temperature", "0"]
    if extra:
        batch = work / "batch.jsonl"
        batch.write_text('{"prompt_tokens": [1, 2, 3], "max_new_tokens": 4}\n')
        args += ["--batch-file", batch, "--output", work / "out.jsonl"]
    else:
        args += ["--prompt-tokens", "1,2,3", "--max-new-tokens", "4"]
    proc = ingot(*args)
    assert proc.returncode == 1, describe(proc)
    assert "no CUDA driver: libcuda.so.1 not found" in proc.stderr


@pytest.mark.skipif(_have_cuda_driver(), reason="a CUDA driver is installed")
def test_generate_auto_falls_back_to_the_cpu_with_the_same_tokens(llm_cuda):
    _, cpu, cuda = llm_cuda
    runs = {}
    for art in (cpu, cuda):
        proc = ingot("generate", art, "--prompt-tokens", "5,9,14,2",
                     "--max-new-tokens", "8", "--temperature", "0", "--json")
        assert proc.returncode == 0, describe(proc)
        runs[art] = (json.loads(proc.stdout)["tokens"], proc.stderr)
    assert runs[cpu][0] == runs[cuda][0]
    assert "running on" not in runs[cpu][1]
    assert ("ingot: running on the CPU: no CUDA driver: libcuda.so.1 not found"
            in runs[cuda][1])


def test_device_flags_are_checked_on_generate(llm_cuda):
    _, cpu, _ = llm_cuda
    for flag, value, message in [
            ("--device", "gpu", "--device gpu: expected cpu, cuda, cuda:N or auto"),
            ("--gpu-memory-fraction", "0", "expected a number in (0, 1]"),
            ("--gpu-memory-fraction", "1.5", "expected a number in (0, 1]")]:
        proc = ingot("generate", cpu, "--prompt-tokens", "1", flag, value)
        assert proc.returncode == 2, describe(proc)
        assert message in proc.stderr
