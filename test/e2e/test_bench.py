"""`ingot bench` and `ingot inspect --memory` on the tiny random llama of
test/fixtures/hf_models.py.

No timing is asserted (the machine is shared); what is checked is that the
reports are complete and consistent with the workload: every request
completes with exactly its output length, percentiles are ordered, TTFT
never exceeds E2E, the --pp/--tg JSON has the shape scripts rely on, the
memory breakdown adds up, and bad flags fail with an error that names them.
"""
import json
import struct
import re
import subprocess
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

BLOCK = 4
COMPILE_FLAGS = ["--max-tokens-per-step", "32", "--max-seqs", "8",
                 "--max-context", "64", "--block-size", str(BLOCK)]
DIST_KEYS = {"mean", "median", "std", "p50", "p90", "p95", "p99"}
SERVING_KEYS = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "completed",
                "failed", "total_input_tokens", "total_output_tokens",
                "duration_s", "request_throughput", "output_throughput",
                "total_token_throughput", "memory", "ceilings", "machine",
                "config"}
MEMORY_KEYS = {"weights_bytes", "kv_allocated_bytes", "kv_used_bytes",
               "kv_waste_pct", "arena_bytes", "overhead_bytes"}
MODE_KEYS = {"n_tokens", "repetitions", "tokens_per_s", "runs_tokens_per_s",
             "pct_of_ceiling"}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    path = hf_models.make_model("llama", out)
    art = out / "llama.ingot"
    proc = ingot("compile", path, "-o", art, *COMPILE_FLAGS, timeout=300)
    assert proc.returncode == 0, describe(proc)
    cfg = json.loads((path / "config.json").read_text())
    # f32 K and V, every layer, one block.
    block_bytes = (2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"]
                   * cfg["head_dim"] * 4 * BLOCK)
    return {"art": art, "dir": out, "block_bytes": block_bytes}


def bench(model, name, *flags, expect_ok=True):
    out = model["dir"] / f"{name}.json"
    proc = ingot("bench", model["art"], "--threads", "2", "--json", out,
                 *flags, timeout=120)
    if not expect_ok:
        return None, proc
    assert proc.returncode == 0, describe(proc)
    return json.loads(out.read_text()), proc


def check_serving(r, prompts, in_len, out_len, model):
    assert SERVING_KEYS <= set(r), sorted(SERVING_KEYS - set(r))
    assert r["completed"] == prompts and r["failed"] == 0, r
    assert r["total_input_tokens"] == prompts * in_len
    assert r["total_output_tokens"] == prompts * out_len
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        d = r[key]
        assert set(d) == DIST_KEYS, (key, d)
        assert 0 <= d["p50"] <= d["p90"] <= d["p95"] <= d["p99"], (key, d)
        assert d["median"] == d["p50"], (key, d)
        assert d["std"] >= 0
    assert r["ttft_ms"]["mean"] <= r["e2e_ms"]["mean"]
    assert r["ttft_ms"]["p99"] <= r["e2e_ms"]["p99"]
    # Every gap belongs to some request's (e2e - ttft) span.
    assert r["itl_ms"]["mean"] <= r["e2e_ms"]["p99"]
    d = r["duration_s"]
    assert d > 0
    assert r["request_throughput"] == pytest.approx(prompts / d)
    assert r["output_throughput"] == pytest.approx(prompts * out_len / d)
    assert r["total_token_throughput"] == pytest.approx(
        prompts * (in_len + out_len) / d)
    mem = r["memory"]
    assert MEMORY_KEYS <= set(mem), mem
    assert mem["kv_used_bytes"] == mem["peak_kv_blocks_used"] * model["block_bytes"]
    assert mem["kv_allocated_bytes"] == mem["kv_blocks_total"] * model["block_bytes"]
    assert 0 < mem["kv_used_bytes"] <= mem["kv_allocated_bytes"]
    assert 0 <= mem["kv_waste_pct"] < 100
    assert {"cpu_model", "isa", "threads", "cores"} <= set(r["machine"])
    assert r["machine"]["threads"] == 2
    assert {"read_gbps", "peak_gflops", "decode_pct_of_bandwidth",
            "prefill_pct_of_peak"} <= set(r["ceilings"])


def test_serving_all_at_once(model):
    r, proc = bench(model, "serve", "--num-prompts", "6", "--input-len", "16",
                    "--output-len", "8", "--no-probe", "--warmup", "2",
                    "--slo", "ttft_ms=1e9,tpot_ms=1e9")
    check_serving(r, 6, 16, 8, model)
    # Generous SLOs: every request is good.
    assert r["goodput"] == pytest.approx(r["request_throughput"])
    assert r["ceilings"]["read_gbps"] is None  # --no-probe
    assert r["config"]["num_prompts"] == 6 and r["config"]["input_len"] == 16
    assert "sweep" not in r
    assert "time to first token" in proc.stdout
    # Prompts of 16 tokens fill 4 blocks each; the 8 outputs and the two
    # untouched slots never exceed 2 more blocks per sequence.
    assert r["memory"]["peak_kv_blocks_used"] <= 6 * 6


def test_serving_sweep_poisson_with_probe(model):
    r, _ = bench(model, "sweep", "--num-prompts", "6", "--input-len", "12",
                 "--output-len", "5", "--request-rate", "200", "--seed", "3",
                 "--max-concurrency", "1,3")
    check_serving(r, 6, 12, 5, model)
    assert [s["max_concurrency"] for s in r["sweep"]] == [1, 3]
    for level in r["sweep"]:
        assert level["completed"] == 6
        assert level["total_output_tokens"] == 30
    c = r["ceilings"]
    assert c["probed"] and c["read_gbps"] > 0 and c["peak_gflops"] > 0
    assert c["decode_pct_of_bandwidth"] > 0 and c["prefill_pct_of_peak"] > 0


def test_range_ratio_and_dataset(model):
    r, _ = bench(model, "ratio", "--num-prompts", "8", "--input-len", "10",
                 "--output-len", "6", "--range-ratio", "0.5", "--no-probe")
    assert r["completed"] == 8
    assert 8 * 5 <= r["total_input_tokens"] <= 8 * 15
    assert 8 * 3 <= r["total_output_tokens"] <= 8 * 9

    data = model["dir"] / "data.jsonl"
    data.write_text(json.dumps({"prompt_tokens": [5, 6, 7], "output_tokens": 4})
                    + "\n\n" + json.dumps({"prompt": "hello there",
                                           "output_tokens": 3}) + "\n")
    r, _ = bench(model, "data", "--dataset", data, "--ignore-eos", "--no-probe")
    assert r["completed"] == 2 and r["total_output_tokens"] == 7
    assert r["config"]["dataset"] == str(data)


def test_pp_tg_json_shape(model):
    r, proc = bench(model, "modes", "--pp", "16", "--tg", "8", "-r", "2")
    assert {"pp", "tg", "ceilings", "machine", "memory"} <= set(r), r
    for mode, n in (("pp", 16), ("tg", 8)):
        m = r[mode]
        assert set(m) == MODE_KEYS, m
        assert m["n_tokens"] == n and m["repetitions"] == 2
        runs = m["runs_tokens_per_s"]
        assert len(runs) == 2 and all(x > 0 for x in runs)
        assert m["tokens_per_s"]["mean"] == pytest.approx(np.mean(runs))
        assert m["tokens_per_s"]["std"] == pytest.approx(np.std(runs))
        assert m["pct_of_ceiling"] > 0
    assert "ttft_ms" not in r  # the serving mode did not run
    assert re.search(r"^\s*pp\s+16\s", proc.stdout, re.M), proc.stdout

    r, _ = bench(model, "pp-only", "--pp", "8", "-r", "1", "--no-probe")
    assert "pp" in r and "tg" not in r
    assert r["pp"]["pct_of_ceiling"] is None


def inspect_memory(model, *flags):
    proc = ingot("inspect", model["art"], "--memory", *flags)
    assert proc.returncode == 0, describe(proc)
    rows = dict(re.findall(r"^\s+(\S[\w ]*?)\s+(\d+) B", proc.stdout, re.M))
    js = ingot("inspect", model["art"], "--json", *flags)
    assert js.returncode == 0, describe(js)
    return {k: int(v) for k, v in rows.items()}, json.loads(js.stdout)["memory"]


def test_inspect_memory_adds_up(model):
    rows, mem = inspect_memory(model, "--kv-blocks", "10", "--threads", "2")
    assert set(rows) == {"weights", "kv cache", "activation arena",
                         "runtime overhead", "total"}, rows
    assert rows["total"] == sum(v for k, v in rows.items() if k != "total")
    assert rows["kv cache"] == 10 * model["block_bytes"]
    assert mem["kv_blocks"] == 10 and mem["threads"] == 2
    assert mem["kv_budget_bytes"] == rows["kv cache"]
    assert mem["weights_bytes"] == rows["weights"]
    assert mem["arena_bytes"] == rows["activation arena"]
    assert mem["runtime_overhead_bytes"] == rows["runtime overhead"]
    assert mem["runtime_overhead_bytes"] == (mem["manifest_bytes"]
                                             + mem["step_io_bytes"]
                                             + mem["thread_scratch_bytes"])
    assert mem["provision_total_bytes"] == rows["total"]
    # The default budget: at most max-seqs full-context sequences here.
    rows, mem = inspect_memory(model)
    assert mem["kv_blocks"] == 8 * (64 // BLOCK)
    assert rows["kv cache"] == mem["kv_blocks"] * model["block_bytes"]
    rows, _ = inspect_memory(model, "--kv-cache-mb", "1")
    assert rows["kv cache"] == (1 << 20) // model["block_bytes"] * model["block_bytes"]


@pytest.mark.parametrize("flags, needle", [
    (["--request-rate", "-1"], "--request-rate"),
    (["--max-concurrency", "0"], "--max-concurrency"),
    (["--tg", "1"], "--tg"),
    (["--slo", "ttft=3"], "--slo"),
    (["--input-len", "60", "--output-len", "10"], "context"),
    (["--dataset", "/nonexistent/d.jsonl"], "/nonexistent/d.jsonl"),
])
def test_bad_flags_fail_clearly(model, flags, needle):
    _, proc = bench(model, "bad", "--no-probe", *flags, expect_ok=False)
    assert proc.returncode != 0
    assert "error:" in proc.stderr and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "terminate" not in proc.stderr


def test_malformed_dataset_line_is_named(model):
    data = model["dir"] / "bad.jsonl"
    data.write_text('{"prompt_tokens": [1, 2], "output_tokens": 2}\n'
                    '{"prompt_tokens": [1, 2], "output_tokens": \n')
    _, proc = bench(model, "bad-data", "--dataset", data, "--no-probe",
                    expect_ok=False)
    assert proc.returncode != 0
    assert f"{data}:2:" in proc.stderr, proc.stderr
    data.write_text('{"prompt_tokens": [1, 2]}\n')
    _, proc = bench(model, "bad-data", "--dataset", data, "--no-probe",
                    expect_ok=False)
    assert f"{data}:1:" in proc.stderr and "output_tokens" in proc.stderr


def test_profile(model):
    trace = model["dir"] / "trace.json"
    r, proc = bench(model, "profile", "--no-probe", "--num-prompts", "4",
                    "--input-len", "8", "--output-len", "4", "--profile", trace)
    assert r["completed"] == 4
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name") == "linear" for e in events), events[:5]
    assert re.search(r"^linear\s+\d+", proc.stdout, re.M), proc.stdout


def png_size(path):
    """(width, height) of a PNG, from its IHDR chunk, after checking the
    signature, that IHDR comes first, and that the image is not trivial."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, (length, kind)
    assert len(data) > 20_000, len(data)  # curves, labels: not a blank image
    return struct.unpack(">II", data[16:24])


def test_plot(model):
    png = model["dir"] / "lat.png"
    r, proc = bench(model, "plot", "--no-probe", "--num-prompts", "4",
                    "--input-len", "8", "--output-len", "4",
                    "--max-concurrency", "1,2", "--plot", png)
    # Two columns of 640x420 panels: 4 CDFs + throughput vs concurrency.
    assert png_size(png) == (1280, 3 * 420)
    # What bench/plot.py draws from: every request's samples, per level.
    for level in r["sweep"]:
        samples = level["samples_ms"]
        assert [len(samples[k]) for k in ("ttft", "tpot", "itl", "e2e")] == \
            [4, 4, 4 * 3, 4], samples
    assert r["samples_ms"] == r["sweep"][-1]["samples_ms"]
    # Without a sweep: the four CDFs only, drawn from a --json file alone.
    bench(model, "plot-one", "--no-probe", "--num-prompts", "2",
                   "--input-len", "8", "--output-len", "4")
    out = model["dir"] / "one.png"
    proc = subprocess.run([sys.executable, str(SOURCE_DIR / "bench/plot.py"),
                           str(model["dir"] / "plot-one.json"), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    assert png_size(out) == (1280, 2 * 420)


def test_plot_says_how_to_get_python(model, monkeypatch):
    png = model["dir"] / "never.png"
    missing = model["dir"] / "no-python"
    monkeypatch.setenv("INGOT_PYTHON", str(missing))
    _, proc = bench(model, "noplot", "--no-probe", "--num-prompts", "2",
                    "--input-len", "8", "--output-len", "2", "--plot", png,
                    expect_ok=False)
    assert proc.returncode == 1, describe(proc)
    assert f"error: --plot: INGOT_PYTHON={missing} is not an executable " \
        "file" in proc.stderr, proc.stderr
    assert f"run: python3 -m venv {SOURCE_DIR}/.venv && {SOURCE_DIR}/.venv/" \
        f"bin/pip install -r {SOURCE_DIR}/scripts/requirements-test.txt" \
        in proc.stderr, proc.stderr
    assert not png.exists()
