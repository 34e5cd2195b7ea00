"""The serving engine through `ingot generate --batch-file`: continuous
batching, preemption, prefix sharing, per-request errors and stops.

The model is the tiny random llama of test/fixtures/hf_models.py, compiled
with small step limits (16 tokens, 64 sequences, 4-token blocks, context 96)
so that a batch needs many steps, chunked prefills and many blocks. Every
comparison is exact: a request's tokens may not depend on what else shares
its steps (kernels give each row the same bits whatever the batch), on
preemption (its prefix is recomputed), or on prefix sharing (shared blocks
hold the very values the request would have written).
"""
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from itertools import count
from pathlib import Path

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

BLOCK = 4
CONTEXT = 96
COMPILE_FLAGS = ["--max-tokens-per-step", "16", "--max-seqs", "64",
                 "--max-context", str(CONTEXT), "--block-size", str(BLOCK)]
STATS_KEYS = {"preemptions", "prefix_cache_hit_rate", "peak_kv_blocks_used",
              "kv_blocks_total", "steps", "generated_tokens", "prompt_tokens",
              "requests", "duration_s", "output_tokens_per_s"}
SAMPLED = {"temperature": 0.8, "top_p": 0.9}


def build(tmp_path_factory, name):
    out = tmp_path_factory.mktemp(name)
    path = hf_models.make_model(name, out)
    art = out / f"{name}.ingot"
    proc = ingot("compile", path, "-o", art, *COMPILE_FLAGS, timeout=300)
    assert proc.returncode == 0, describe(proc)
    vocab = json.loads((path / "config.json").read_text())["vocab_size"]
    return {"art": art, "vocab": vocab, "dir": out}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build(tmp_path_factory, "llama")


_runs = count()


def run_batch(model, requests, *flags, expect_ok=True):
    """Runs one batch; returns (output lines, stats dict, process)."""
    n = next(_runs)
    work = Path(model["dir"])
    src, dst, stats = (work / f"in{n}.jsonl", work / f"out{n}.jsonl",
                       work / f"stats{n}.json")
    src.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                           for r in requests))
    proc = ingot("generate", model["art"], "--batch-file", src, "--output", dst,
                 "--stats-json", stats, *flags, timeout=300)
    if not expect_ok:
        return None, None, proc
    assert proc.returncode == 0, describe(proc)
    outs = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [o["index"] for o in outs] == list(range(len(requests)))
    return outs, json.loads(stats.read_text()), proc


def alone(model, requests):
    """Each request in a batch of its own (two processes at a time)."""
    def one(r):
        outs, _, _ = run_batch(model, [r], "--threads", "1")
        return outs[0]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, requests))


def mixed_requests(vocab, n=64, seed=5):
    """Prompts of 1-40 tokens, 1-24 new tokens; half greedy, half seeded
    sampling; some run past EOS."""
    rng = np.random.default_rng(seed)
    reqs = []
    for i in range(n):
        r = {"prompt_tokens": [int(t) for t in
                               rng.integers(3, vocab, size=rng.integers(1, 41))],
             "max_new_tokens": int(rng.integers(1, 25)),
             "temperature": 0}
        if i % 2:
            r.update(SAMPLED, seed=1000 + i)
        if i % 3 == 0:
            r["ignore_eos"] = True
        reqs.append(r)
    return reqs


def blocks_needed(r):
    return -(-(len(r["prompt_tokens"]) + r["max_new_tokens"]) // BLOCK)


def check_finished(requests, outs):
    for r, o in zip(requests, outs):
        assert "error" not in o, o
        assert o["prompt_tokens"] == r["prompt_tokens"]
        assert o["finish_reason"] in ("stop", "length"), o
        if o["finish_reason"] == "length":
            assert len(o["tokens"]) == r["max_new_tokens"], o
        else:
            assert len(o["tokens"]) <= r["max_new_tokens"], o
        if r.get("ignore_eos"):
            assert o["finish_reason"] == "length", o


def same_tokens(a, b, what):
    for i, (x, y) in enumerate(zip(a, b)):
        assert (x["tokens"], x["finish_reason"], x["text"]) == \
            (y["tokens"], y["finish_reason"], y["text"]), \
            f"request {i}: {what}\n{x}\n{y}"


@pytest.fixture(scope="module")
def mixed(model):
    reqs = mixed_requests(model["vocab"])
    outs, stats, proc = run_batch(model, reqs)
    return reqs, outs, stats, proc


def test_batch_equals_alone(model, mixed):
    reqs, outs, _, _ = mixed
    check_finished(reqs, outs)
    same_tokens(outs, alone(model, reqs), "batch of 64 vs alone")


@pytest.mark.parametrize("name", ["mistral", "gpt2"])
def test_batch_equals_alone_other_architectures(name, tmp_path_factory):
    """A sliding window (mistral, window 8) and learned positions (gpt2)
    under batching: a subset of 16 alone runs, chosen with a fixed seed."""
    other = build(tmp_path_factory, name)
    reqs = mixed_requests(other["vocab"], seed=9)
    outs, _, _ = run_batch(other, reqs)
    check_finished(reqs, outs)
    subset = sorted(np.random.default_rng(3).choice(64, 16, replace=False))
    same_tokens([outs[i] for i in subset], alone(other, [reqs[i] for i in subset]),
                f"{name}: batch of 64 vs alone")


def test_quarter_budget_preempts_and_completes(model):
    """16 requests fit one step's decodes (16 tokens), so they all run at
    once and would hold every block they need; a quarter of that forces
    preemptions."""
    rng = np.random.default_rng(8)
    reqs = [{"prompt_tokens": [int(t) for t in
                               rng.integers(3, model["vocab"],
                                            size=rng.integers(2, 13))],
             "max_new_tokens": int(rng.integers(24, 41)), "ignore_eos": True,
             **({"temperature": 0} if i % 2 else dict(SAMPLED, seed=i))}
            for i in range(16)]
    budget = sum(map(blocks_needed, reqs)) // 4
    assert budget >= max(map(blocks_needed, reqs))
    full, _, _ = run_batch(model, reqs)
    outs, stats, proc = run_batch(model, reqs, "--kv-blocks", str(budget))
    check_finished(reqs, outs)
    assert stats["kv_blocks_total"] == budget, stats
    assert stats["preemptions"] > 0, stats
    assert 0 < stats["peak_kv_blocks_used"] <= budget, stats
    assert f"{budget} blocks × {BLOCK} tokens" in proc.stderr, proc.stderr
    same_tokens(outs, full, "quarter KV budget vs full")


def test_mixed_batch_under_a_quarter_of_its_peak(model, mixed):
    """The 64 mixed requests with a quarter of the blocks they held at
    their peak, but no less than one full-context sequence needs (the
    engine's floor, so that any request can always run alone)."""
    reqs, full, stats, _ = mixed
    budget = max(stats["peak_kv_blocks_used"] // 4, CONTEXT // BLOCK)
    assert budget < stats["peak_kv_blocks_used"] // 2
    outs, tight, _ = run_batch(model, reqs, "--kv-blocks", str(budget))
    check_finished(reqs, outs)
    assert tight["kv_blocks_total"] == budget, tight
    assert tight["preemptions"] > 0, tight
    assert tight["peak_kv_blocks_used"] <= budget, tight
    same_tokens(outs, full, "quarter of the peak vs full")


PREFIX_BLOCKS = 10


def test_prefix_sharing_saves_blocks(model):
    """Both runs are held to 4 sequences at a time: the cache also makes
    admission faster (the prefix is not recomputed), and without a common
    concurrency more sequences at once could hide the saving."""
    rng = np.random.default_rng(11)
    vocab = model["vocab"]
    system = [int(t) for t in rng.integers(3, vocab, size=PREFIX_BLOCKS * BLOCK)]
    reqs = [{"prompt_tokens": system + [int(t) for t in
                                        rng.integers(3, vocab, size=1 + i % 3)],
             "max_new_tokens": 8, "ignore_eos": True,
             **({"temperature": 0} if i % 2 else dict(SAMPLED, seed=i))}
            for i in range(16)]
    shared, on, _ = run_batch(model, reqs, "--max-seqs", "4")
    private, off, _ = run_batch(model, reqs, "--max-seqs", "4",
                                "--no-prefix-caching")
    check_finished(reqs, shared)
    same_tokens(shared, private, "prefix caching on vs off")
    same_tokens(shared, alone(model, reqs[:2]), "prefix caching vs alone")
    assert on["prefix_cache_hit_rate"] > 0, on
    assert off["prefix_cache_hit_rate"] == 0, off
    # At least one whole copy of the prefix saved.
    assert on["peak_kv_blocks_used"] <= off["peak_kv_blocks_used"] - \
        PREFIX_BLOCKS, (on, off)


def test_bad_requests_are_rejected_alone(model):
    vocab = model["vocab"]
    good = [{"prompt_tokens": [5, 9, 30, 7], "max_new_tokens": 8,
             "temperature": 0},
            {"prompt": "The capital of France", "max_new_tokens": 5,
             "temperature": 0.8, "top_p": 0.9, "seed": 3},
            {"prompt_tokens": [11] * 30, "max_new_tokens": 12,
             "temperature": 0}]
    bad = [({"prompt_tokens": []}, "empty"),
           ({"prompt_tokens": [5, vocab + 7]}, "vocabulary"),
           ({"prompt_tokens": [5], "max_new_tokens": -1}, "max_new_tokens"),
           ({"prompt_tokens": [5], "temperature": -1}, "temperature"),
           ({"prompt_tokens": [5], "top_p": 0}, "top_p"),
           ({"prompt_tokens": [5] * (CONTEXT + 4)}, "context"),
           ('{"prompt_tokens": [5], }', "JSON"),
           ({"prompt_tokens": [5], "top_k": "ten"}, "top_k"),
           ({"prompt_tokens": [5], "temprature": 1}, "temprature")]
    mixed = [good[0], bad[0][0], bad[1][0], good[1], *[b for b, _ in bad[2:]],
             good[2]]
    outs, stats, _ = run_batch(model, mixed)
    errors = [o for o in outs if o["finish_reason"] == "error"]
    assert len(errors) == len(bad)
    for (_, word), o in zip(bad, errors):
        assert word in o["error"], o
        assert o["tokens"] == [], o
    valid = [o for o in outs if o["finish_reason"] != "error"]
    reference, _, _ = run_batch(model, good)
    same_tokens(valid, reference, "valid requests beside bad ones")
    assert stats["requests"] == len(mixed)


def test_stop_strings_token_ids_and_ignore_eos(model):
    base = {"prompt_tokens": [7, 8, 9, 10, 11], "max_new_tokens": 20,
            "temperature": 0, "ignore_eos": True}
    (full,), _, _ = run_batch(model, [base])
    tokens, text = full["tokens"], full["text"]
    assert len(tokens) == 20 and full["finish_reason"] == "length"

    stop_id = tokens[6]
    first = tokens.index(stop_id)
    stop_str = text[len(text) // 2:len(text) // 2 + 2]
    at = text.find(stop_str)
    assert stop_str.strip() and at > 0, text
    outs, _, _ = run_batch(model, [dict(base, stop_token_ids=[stop_id]),
                                   dict(base, stop=[stop_str])])
    by_id, by_str = outs
    assert by_id["finish_reason"] == "stop", by_id
    assert by_id["tokens"] in (tokens[:first], tokens[:first + 1]), by_id
    assert by_str["finish_reason"] == "stop", by_str
    assert by_str["tokens"] == tokens[:len(by_str["tokens"])], by_str
    assert len(by_str["tokens"]) < 20
    assert by_str["text"] in (text[:at], text[:at + len(stop_str)]), by_str

    # Requests that stop on EOS when allowed run to max_new_tokens with
    # ignore_eos, and agree with the stopped run up to the EOS.
    reqs = [{"prompt_tokens": [3 + i, 40, 41], "max_new_tokens": 24,
             "temperature": 1.5, "seed": i} for i in range(48)]
    outs, _, _ = run_batch(model, reqs)
    stopped = [(r, o) for r, o in zip(reqs, outs)
               if o["finish_reason"] == "stop"]
    assert stopped, "no request hit EOS; pick other seeds"
    again, _, _ = run_batch(model, [dict(r, ignore_eos=True)
                                    for r, _ in stopped])
    for (r, o), a in zip(stopped, again):
        assert a["finish_reason"] == "length" and len(a["tokens"]) == 24, a
        assert a["tokens"][:len(o["tokens"])] == o["tokens"], (o, a)


def test_stats_and_budget_line(model, mixed):
    reqs, outs, stats, proc = mixed
    assert STATS_KEYS <= set(stats), stats
    assert stats["requests"] == len(reqs)
    assert stats["generated_tokens"] == sum(len(o["tokens"]) for o in outs)
    assert stats["prompt_tokens"] == sum(len(r["prompt_tokens"]) for r in reqs)
    assert stats["preemptions"] == 0, stats
    assert 0 < stats["peak_kv_blocks_used"] <= stats["kv_blocks_total"]
    assert 0 <= stats["prefix_cache_hit_rate"] <= 1
    assert stats["steps"] > 0 and stats["duration_s"] > 0
    assert stats["output_tokens_per_s"] == pytest.approx(
        stats["generated_tokens"] / stats["duration_s"], rel=1e-6)
    assert re.search(rf"\d+ blocks × {BLOCK} tokens = \d+ tokens, [\d.]+ MiB",
                     proc.stderr), proc.stderr


def test_block_size_must_match(model):
    _, _, proc = run_batch(model, [{"prompt_tokens": [5]}], "--block-size", "8",
                           expect_ok=False)
    assert proc.returncode == 1, describe(proc)
    assert "8" in proc.stderr and "4" in proc.stderr, proc.stderr
    assert "block size" in proc.stderr, proc.stderr
