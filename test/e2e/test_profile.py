"""`ingot profile` and `ingot generate --profile` on the tiny random llama of
test/fixtures/hf_models.py.

Each engine step runs every kernel of the plan once, so a trace must hold
exactly (steps x plan steps) kernel events, where the plan comes from
`ingot inspect --json` and the steps from the trace's own step events, and
each step event must enclose its kernels. No timing is asserted: only the
structure of the trace and of the top-kernels table.
"""
import json
import sys
from collections import Counter

import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

# Small steps so that a 20-token prompt is prefilled in two chunks.
COMPILE_FLAGS = ["--max-tokens-per-step", "16", "--max-seqs", "8",
                 "--max-context", "64", "--block-size", "4"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("profile")
    path = hf_models.make_model("llama", out)
    art = out / "llama.ingot"
    proc = ingot("compile", path, "-o", art, *COMPILE_FLAGS, timeout=300)
    assert proc.returncode == 0, describe(proc)
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    plan = [s["kernel"] for s in json.loads(proc.stdout)["steps"]]
    return {"art": art, "dir": out, "plan": plan}


def check_trace(path, plan):
    """Checks the trace's structure; returns its step events."""
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    steps = [e for e in events if e.get("cat") == "step"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert steps, "no step events"
    for e in steps + kernels:
        assert e["ph"] == "X" and e["dur"] >= 0 and "ts" in e, e
    assert len(kernels) == len(steps) * len(plan), (
        f"{len(kernels)} kernel events for {len(steps)} steps of "
        f"{len(plan)} kernels")
    # Per run: the plan's kernels in order, inside the run's span.
    by_run = {}
    for k in kernels:
        by_run.setdefault(k["args"]["run"], []).append(k)
    for s in steps:
        ks = by_run[s["args"]["run"]]
        assert [k["name"] for k in ks] == plan
        assert [k["args"]["step"] for k in ks] == list(range(len(plan)))
        for k in ks:
            assert s["ts"] <= k["ts"] + 1e-3
            assert k["ts"] + k["dur"] <= s["ts"] + s["dur"] + 1e-3
            assert k["args"]["bytes"] > 0, k
    linear = [k for k in kernels if k["name"] == "linear"]
    assert linear and all(k["args"]["flops"] > 0 for k in linear)
    return steps


def table_kernels(text):
    """Kernel names of the rows of the top-kernels table in `text`."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines)
                if line.startswith("kernel ") and "total ms" in line)
    names = []
    for line in lines[head + 1:]:
        if line.startswith("kernels:"):
            return names
        names.append(line.split()[0])
    raise AssertionError("no footer after the table:\n" + text)


def test_profile_command(model):
    trace = model["dir"] / "profile.json"
    proc = ingot("profile", model["art"], "--prompt-len", "20", "--gen", "5",
                 "--batch", "2", "--threads", "2", "--trace", trace,
                 "--top", "50", "--no-probe")
    assert proc.returncode == 0, describe(proc)
    steps = check_trace(trace, model["plan"])
    labels = Counter(s["name"].split()[0] for s in steps)
    assert labels["prefill"] >= 2 and labels["decode"] >= 1, labels
    # 2 x 20 prompt tokens in 16-token steps, and 4 decode tokens per
    # request (its 1st comes from its prefill). How they share steps
    # depends on when the second request reaches the engine.
    assert sum(s["args"]["tokens"] for s in steps) == 2 * 20 + 2 * 4
    assert set(table_kernels(proc.stdout)) == set(model["plan"])
    assert "decode" in proc.stdout and "p99" in proc.stdout
    assert "% BW" not in proc.stdout, "--no-probe leaves out the ceilings"


def test_profile_with_probe_and_by_origin(model):
    proc = ingot("profile", model["art"], "--prompt-len", "8", "--gen", "2",
                 "--threads", "1", "--top", "3", "--by-origin")
    assert proc.returncode == 0, describe(proc)
    assert "ceilings: read" in proc.stdout and "% BW" in proc.stdout
    assert "layers.*." in proc.stdout, proc.stdout
    assert "more)" in proc.stdout  # top 3 of more kernels


def test_generate_profile_single_and_batch(model):
    trace = model["dir"] / "generate.json"
    proc = ingot("generate", model["art"], "--prompt-tokens", "1,2,3,4,5",
                 "--max-new-tokens", "4", "--temperature", "0",
                 "--profile", trace, "--json")
    assert proc.returncode == 0, describe(proc)
    steps = check_trace(trace, model["plan"])
    # One prefill step, then one decode step per token after the first.
    assert [s["name"] for s in steps] == ["prefill 5"] + ["decode 1"] * 3
    assert "linear" in table_kernels(proc.stderr)
    json.loads(proc.stdout)  # --json output unchanged

    batch = model["dir"] / "batch.jsonl"
    batch.write_text("".join(
        json.dumps({"prompt_tokens": [3, 4, 5, i + 1], "max_new_tokens": 3,
                    "temperature": 0}) + "\n" for i in range(3)))
    trace = model["dir"] / "batch-trace.json"
    proc = ingot("generate", model["art"], "--batch-file", batch, "--output",
                 model["dir"] / "out.jsonl", "--profile", trace)
    assert proc.returncode == 0, describe(proc)
    steps = check_trace(trace, model["plan"])
    assert steps[0]["name"].startswith("prefill"), steps[0]
    assert sum(s["args"]["tokens"] for s in steps) == 3 * 4 + 3 * 2
    assert "linear" in table_kernels(proc.stderr)


def test_bad_arguments(model):
    proc = ingot("profile", model["art"], "--gen", "0")
    assert proc.returncode == 2 and "--gen" in proc.stderr, describe(proc)
    proc = ingot("profile", model["art"], "--prompt-len", "60", "--gen", "10",
                 "--no-probe")
    assert proc.returncode == 1 and "context" in proc.stderr, describe(proc)
    proc = ingot("profile", model["art"], "--prompt-len", "4", "--gen", "1",
                 "--no-probe", "--trace", model["dir"] / "no" / "such.json")
    assert proc.returncode == 1 and "--trace" in proc.stderr, describe(proc)


def test_run_profile_on_an_onnx_model(tmp_path):
    """`ingot run --profile` times every kernel of the runs after the
    first: one step event per profiled run, the table on stderr."""
    import numpy as np
    from ingot_testlib import make_model, node, save_model, write_inputs
    w = np.random.default_rng(4).standard_normal((8, 6)).astype(np.float32)
    onnx_model = make_model([node("MatMul", ["x", "w"], ["h"]),
                             node("Relu", ["h"], ["y"])],
                            [("x", np.float32, [3, 8])], ["y"], {"w": w})
    art = tmp_path / "m.ingot"
    proc = ingot("compile", save_model(onnx_model, tmp_path / "m.onnx"),
                 "-o", art)
    assert proc.returncode == 0, describe(proc)
    plan = [s["kernel"] for s in
            json.loads(ingot("inspect", art, "--json").stdout)["steps"]]
    x = np.random.default_rng(5).standard_normal((3, 8)).astype(np.float32)
    inputs = write_inputs({"x": x}, tmp_path)
    trace = tmp_path / "t.json"
    proc = ingot("run", art, *inputs, "--output-dir", tmp_path / "out",
                 "--repeat", "3", "--profile", trace)
    assert proc.returncode == 0, describe(proc)
    assert len(check_trace(trace, plan)) == 3
    assert set(table_kernels(proc.stderr)) == set(plan), proc.stderr
    # The trace must not overwrite what the run reads.
    proc = ingot("run", art, *inputs, "--output-dir", tmp_path / "out",
                 "--profile", tmp_path / "input0.npy")
    assert proc.returncode == 1 and "--profile" in proc.stderr, describe(proc)
