"""--target cuda on language models, checked without a GPU: every step of
an f32, f16, bf16, q8, q4 or q4m Llama-family plan gets CUDA launches, the
cubins define exactly the table's kernels, the build is byte-identical, fp8
linears are left to the CPU and named, and generate/--device behave
without a driver (the numerics need a GPU: scripts/gpu-check.sh)."""
import json
import sys

import pytest

from cuda_testlib import (EM_CUDA, elf_kernels, have_cuda_driver,
                          inspect_json, needs_toolkit)
from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402


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


@pytest.mark.skipif(have_cuda_driver(), reason="a CUDA driver is installed")
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


@pytest.mark.skipif(have_cuda_driver(), reason="a CUDA driver is installed")
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

