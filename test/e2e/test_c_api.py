"""The C API example (examples/c_api_example.c) on a tiny compiled model:
two threads submit three prompts, tokens stream through the callback, and
every request must finish without error."""
import sys

from ingot_testlib import BUILD_DIR, SOURCE_DIR, describe, ingot
import subprocess

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402


def test_c_api_example_streams_every_request(tmp_path):
    model = hf_models.make_all(tmp_path / "hf")["llama"]
    art = tmp_path / "llama.ingot"
    proc = ingot("compile", model, "-o", art, "--max-tokens-per-step", "16",
                 "--max-seqs", "8", "--max-context", "64", "--block-size", "4")
    assert proc.returncode == 0, describe(proc)
    example = BUILD_DIR / "bin" / "ingot-c-api-example"
    run = subprocess.run([str(example), str(art), "6"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("finished:") == 3, run.stdout
    assert "token" in run.stdout
    # An 8-bit KV cache through the options, and a name it does not know.
    run = subprocess.run([str(example), str(art), "6", "int8"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("finished:") == 3, run.stdout
    run = subprocess.run([str(example), str(art), "6", "int3"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "int3" in run.stderr, run.stderr
    # Weights kept outside: refused without the directory, served with it.
    ext = tmp_path / "external.ingot"
    proc = ingot("compile", model, "-o", ext, "--weights=external",
                 "--max-tokens-per-step", "16", "--max-seqs", "8",
                 "--max-context", "64", "--block-size", "4")
    assert proc.returncode == 0, describe(proc)
    run = subprocess.run([str(example), str(ext), "6"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 1 and "--weights DIR" in run.stderr, run.stderr
    run = subprocess.run([str(example), str(ext), "6", "", str(model)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("finished:") == 3, run.stdout
