"""Cancelling running requests frees their KV blocks, and a token callback
that throws ends its own request only (engine_cancel_check.cpp on a tiny
compiled Llama)."""
import subprocess
import sys

from ingot_testlib import BUILD_DIR, SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402


def test_cancel_frees_blocks(tmp_path):
    model = hf_models.make_all(tmp_path / "hf")["llama"]
    art = tmp_path / "llama.ingot"
    proc = ingot("compile", model, "-o", art, "--max-tokens-per-step", "16",
                 "--max-seqs", "8", "--max-context", "64", "--block-size", "4")
    assert proc.returncode == 0, describe(proc)
    run = subprocess.run([str(BUILD_DIR / "bin" / "engine-cancel-check"),
                          str(art)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("cancelled") == 2, run.stdout
    assert "throwing callback: 3 events, 1 failed requests" in run.stdout, \
        run.stdout
