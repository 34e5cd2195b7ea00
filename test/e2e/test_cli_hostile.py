"""The `ingot` CLI against hostile command lines (issue 17): absurd numbers,
files that are not files, ids outside the vocabulary, invalid UTF-8, outputs
that would overwrite inputs, batches that wholly fail. Each case asserts the
exit code (2 for bad usage, 1 for bad input, never a signal) and the
message, which names the flag, the value and what was expected; and the
valid values next to each limit still work."""
import json
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from ingot_testlib import (SOURCE_DIR, describe, ingot, ingot_bin, make_model,
                           node, save_model)

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

HUGE = "99999999999999999999999"  # beyond int64


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    """The tiny llama: {"dir": HF directory, "art": artifact, "vocab": n}."""
    work = tmp_path_factory.mktemp("hostile")
    model_dir = hf_models.make_model("llama", work)
    art = work / "llama.ingot"
    proc = ingot("compile", model_dir, "-o", art)
    assert proc.returncode == 0, describe(proc)
    vocab = json.loads((model_dir / "config.json").read_text())["vocab_size"]
    return {"dir": model_dir, "art": art, "vocab": vocab, "work": work}


def ingot_raw(*args, **kwargs):
    """`ingot ARGS` with bytes arguments allowed (invalid UTF-8 in argv)."""
    cmd = [str(ingot_bin())] + [a if isinstance(a, bytes) else str(a)
                                for a in args]
    proc = subprocess.run(cmd, capture_output=True, timeout=60, **kwargs)
    proc.stderr = proc.stderr.decode(errors="replace")
    return proc


def expect(proc, code, *needles):
    assert proc.returncode == code, f"expected exit code {code}\n" + describe(proc)
    for needle in needles:
        assert needle in proc.stderr, f"stderr lacks {needle!r}\n" + describe(proc)


# -- 1, 2, 10: every integer flag has a range, named in one message ----------
# (subcommand, flag, value, range); the artifact and other arguments are
# added by the test.
RANGE_CASES = [
    ("compile", "--block-size", HUGE, "1..4096"),
    ("compile", "--block-size", "4294967296", "1..4096"),
    ("compile", "--max-seqs", HUGE, "1..65536"),
    ("compile", "--max-context", HUGE, "1..16777216"),
    ("compile", "--max-tokens-per-step", HUGE, "1..1048576"),
    ("compile", "--group-size", HUGE, "0..1048576"),
    ("compile", "--block-size", "+16", "1..4096"),
    ("generate", "--threads", "100000", "0..1024"),
    ("generate", "--threads", "9223372036854775807", "0..1024"),
    ("generate", "--kv-blocks", "4294967296", "1..16777216"),
    ("generate", "--kv-blocks", "2147483647", "1..16777216"),
    ("generate", "--max-new-tokens", HUGE, "0..2147483647"),
    ("generate", "--top-k", "-2", "-1..2147483647"),
    ("generate", "--seed", "-1", "0..9223372036854775807"),
    ("generate-batch", "--kv-cache-mb", HUGE, "1..16777216"),
    ("generate-batch", "--max-seqs", "70000", "1..65536"),
    ("run", "--threads", "2000", "0..1024"),
    ("bench", "--threads", "5000", "0..1024"),
    ("bench", "--input-len", HUGE, "1..16777216"),
    ("profile", "--batch", "9999999", "1..65536"),
    ("profile", "--threads", "-1", "0..1024"),
    ("perplexity", "--threads", HUGE, "0..1024"),
    ("inspect", "--kv-blocks", HUGE, "1..16777216"),
    ("serve", "--kv-blocks", "2147483647", "1..16777216"),
]


def command_line(llm, sub, *extra):
    art, work = llm["art"], llm["work"]
    return {
        "compile": ["compile", llm["dir"], "-o", work / "never.ingot"],
        "generate": ["generate", art, "--prompt", "hi"],
        "generate-batch": ["generate", art, "--batch-file", work / "in.jsonl",
                           "--output", work / "never.jsonl"],
        "run": ["run", art, "--output-dir", work / "never"],
        "bench": ["bench", art],
        "profile": ["profile", art],
        "perplexity": ["perplexity", art, "--text", work / "never.txt"],
        "inspect": ["inspect", art],
        "serve": ["serve", art],
    }[sub] + list(extra)


@pytest.mark.parametrize("sub, flag, value, limits", RANGE_CASES)
def test_integer_flag_out_of_range(llm, sub, flag, value, limits):
    proc = ingot(*command_line(llm, sub, flag, value))
    expect(proc, 2, f"error: {flag} {value}: expected an integer in {limits}")
    assert not (llm["work"] / "never.ingot").exists()


@pytest.mark.parametrize("flag, value, message", [
    ("--shape", f"x=2x{HUGE}", "with each dim an integer in 0..2147483647"),
    ("--max-dim", f"seq={HUGE}", "with N an integer in 1..2147483647"),
    ("--max-dim", "seq=0", "with N an integer in 1..2147483647"),
])
def test_shape_flags_out_of_range(llm, flag, value, message):
    proc = ingot(*command_line(llm, "compile", flag, value))
    expect(proc, 2, f"error: {flag} {value}: expected", message)


def test_missing_integer_value_names_the_range(llm):
    proc = ingot(*command_line(llm, "compile", "--block-size"))
    expect(proc, 2, "--block-size needs a value: expected an integer in 1..4096")


def test_valid_values_still_work(llm, tmp_path):
    out = tmp_path / "m.ingot"
    proc = ingot("compile", llm["dir"], "-o", out, "--block-size", "16",
                 "--max-seqs", "8", "--max-context=64",
                 "--max-tokens-per-step", "64")
    assert proc.returncode == 0, describe(proc)
    # --threads 0 is "every core"; --top-k -1 is "off", as in a batch line.
    proc = ingot("generate", out, "--prompt", "hi", "--max-new-tokens", "2",
                 "--threads", "0", "--top-k", "-1", "--seed", "0",
                 "--kv-blocks", "8", "--json")
    assert proc.returncode == 0, describe(proc)
    assert len(json.loads(proc.stdout)["tokens"]) <= 2


# ASan maps terabytes of shadow memory at start-up, so under the address-space
# limit this test sets the binary dies before main (scripts/fuzz.sh test sets
# INGOT_SANITIZED=1).
@pytest.mark.skipif(os.environ.get("INGOT_SANITIZED") == "1",
                    reason="RLIMIT_AS leaves ASan no room for its shadow memory")
def test_escaping_exception_is_an_internal_error(llm, tmp_path):
    """The last-resort net of Main.cpp: a text too large for the address
    space is a std::bad_alloc that no command expects."""
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(1 << 30)  # sparse: no disk used

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    proc = ingot_raw("tokenize", llm["art"], "--text-file", big,
                     preexec_fn=limit_memory)
    expect(proc, 1, "error: tokenize: internal error: std::bad_alloc")


# -- 3, 4: inputs must be regular files -----------------------------------------
@pytest.mark.parametrize("args, message", [
    (["run", "ART", "--input", "x=/dev/zero", "--output-dir", "OUT"],
     "error: --input x=/dev/zero: not a regular file"),
    (["run", "ART", "--input", "x=DIR", "--output-dir", "OUT"],
     "error: --input x=DIR: not a regular file (it is a directory)"),
    (["tokenize", "ART", "--text-file", "DIR"],
     "error: --text-file DIR: not a regular file (it is a directory)"),
    (["tokenize", "ART", "--text-file", "/dev/zero"],
     "error: --text-file /dev/zero: not a regular file"),
    (["tokenize", "ART", "--text-file", "DIR/missing.txt"],
     "error: --text-file DIR/missing.txt: cannot open it: No such file"),
    (["perplexity", "ART", "--text", "/dev/zero"],
     "error: --text /dev/zero: not a regular file"),
    (["generate", "ART", "--batch-file", "DIR", "--output", "OUT"],
     "error: --batch-file DIR: not a regular file (it is a directory)"),
])
def test_inputs_must_be_regular_files(llm, tmp_path, args, message):
    subst = {"ART": str(llm["art"]), "DIR": str(tmp_path),
             "OUT": str(tmp_path / "out")}
    for key, value in subst.items():
        args = [a.replace(key, value) for a in args]
        message = message.replace(key, value)
    proc = ingot(*args, timeout=30)
    expect(proc, 1, message)


# -- 5, 6: token ids and text -----------------------------------------------------
@pytest.mark.parametrize("ids, bad", [("-1", "-1"), ("5,VOCAB", "VOCAB"),
                                      (f"5,{HUGE}", "9223372036854775807")])
def test_decode_refuses_ids_outside_the_vocabulary(llm, ids, bad):
    vocab = str(llm["vocab"])
    proc = ingot("tokenize", llm["art"], "--decode", ids.replace("VOCAB", vocab))
    expect(proc, 1, f"--decode: id {bad.replace('VOCAB', vocab)} is outside "
                    f"the vocabulary of {vocab} tokens")
    proc = ingot("tokenize", llm["art"], "--decode", f"0,{int(vocab) - 1}")
    assert proc.returncode == 0, describe(proc)


def test_invalid_utf8_is_refused_with_its_offset(llm, tmp_path):
    bad = b"ab\xffc"
    text_file = tmp_path / "bad.txt"
    text_file.write_bytes(bad)
    cases = [(["tokenize", llm["art"], "--text-file", text_file], "--text-file"),
             (["tokenize", llm["art"], "--text", bad], "--text"),
             (["generate", llm["art"], "--prompt", bad], "--prompt")]
    for args, label in cases:
        expect(ingot_raw(*args), 1, f"error: {label}: invalid UTF-8 at byte 2")
    # A batch line's prompt is JSON, whose reader refuses it the same way.
    batch = tmp_path / "in.jsonl"
    batch.write_bytes(b'{"prompt": "a\xc3"}\n')
    proc = ingot("generate", llm["art"], "--batch-file", batch, "--output",
                 tmp_path / "out.jsonl")
    expect(proc, 1, "invalid UTF-8 in a string")


# -- 7: an output never overwrites an input -------------------------------------
def probe_onnx(path):
    return save_model(make_model([node("Relu", ["x"], ["y"])],
                                 [("x", np.float32, [2])], ["y"]), path)


def test_compile_output_is_not_the_model(llm, tmp_path, monkeypatch):
    model = probe_onnx(tmp_path / "m.onnx")
    before = model.read_bytes()
    monkeypatch.chdir(tmp_path)
    proc = ingot("compile", "m.onnx", "-o", "./m.onnx")
    expect(proc, 1, "-o ./m.onnx names the same file as the model m.onnx")
    assert model.read_bytes() == before
    config = llm["dir"] / "config.json"
    before = config.read_bytes()
    proc = ingot("compile", llm["dir"], "-o", config)
    expect(proc, 1, "would overwrite config.json, a file of the model directory")
    assert config.read_bytes() == before
    # An artifact inside the model directory may be written and replaced.
    for _ in range(2):
        proc = ingot("compile", llm["dir"], "-o", llm["dir"] / "m.ingot")
        assert proc.returncode == 0, describe(proc)


def test_compile_output_is_not_external_data(tmp_path):
    """An ONNX model whose weight lies in weights.bin beside it: -o naming
    that file is refused and it stays intact; an artifact there is fine."""
    import onnx
    from onnx import numpy_helper
    w = np.random.default_rng(7).standard_normal((4, 4)).astype(np.float32)
    model = make_model([node("MatMul", ["x", "w"], ["y"])],
                       [("x", np.float32, [2, 4])], ["y"],
                       initializers={"w": w})
    onnx.save_model(model, tmp_path / "m.onnx", save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin",
                    size_threshold=0)
    data = tmp_path / "weights.bin"
    before = data.read_bytes()
    assert numpy_helper.to_array(
        onnx.load(tmp_path / "m.onnx").graph.initializer[0],
        base_dir=str(tmp_path)).tobytes() == w.tobytes()
    proc = ingot("compile", tmp_path / "m.onnx", "-o", data)
    expect(proc, 1, "would overwrite weights.bin, a file beside the model",
           "external data")
    assert data.read_bytes() == before
    for _ in range(2):
        proc = ingot("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.ingot")
        assert proc.returncode == 0, describe(proc)


def test_generate_outputs_are_not_inputs(llm, tmp_path, monkeypatch):
    batch = tmp_path / "in.jsonl"
    batch.write_text('{"prompt_tokens": [5], "max_new_tokens": 1}\n')
    before = batch.read_bytes()
    monkeypatch.chdir(tmp_path)
    for flag in ["--output", "--stats-json"]:
        args = ["--output", "out.jsonl"] if flag == "--stats-json" else []
        proc = ingot("generate", llm["art"], "--batch-file", "in.jsonl", *args,
                     flag, "./in.jsonl")
        expect(proc, 1, f"{flag} ./in.jsonl names the same file as "
                        "--batch-file in.jsonl")
    assert batch.read_bytes() == before
    proc = ingot("generate", llm["art"], "--prompt", "hi", "--logits-out",
                 llm["art"])
    expect(proc, 1, "--logits-out", "names the same file as the artifact")


def test_run_output_is_not_an_input(tmp_path):
    art = tmp_path / "relu.ingot"
    proc = ingot("compile", probe_onnx(tmp_path / "relu.onnx"), "-o", art)
    assert proc.returncode == 0, describe(proc)
    x = tmp_path / "y.npy"  # the name `run` gives output y
    np.save(x, np.array([-1, 2], dtype=np.float32))
    proc = ingot("run", art, "--input", f"x={x}", "--output-dir", tmp_path)
    expect(proc, 1, "output 'y' at", "names the same file as --input")
    assert np.load(x).tolist() == [-1, 2]


# -- 8, 9: batch exit codes, and one validation for flags and batch lines --------
def run_batch(llm, tmp_path, lines, *flags):
    batch, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    batch.write_text("".join(json.dumps(line) + "\n" for line in lines))
    proc = ingot("generate", llm["art"], "--batch-file", batch, "--output", out,
                 *flags)
    outs = [json.loads(line) for line in out.read_text().splitlines()] \
        if out.exists() else None
    return proc, outs


def test_batch_exit_code_counts_failures(llm, tmp_path):
    bad = [{"prompt_tokens": [5], "seed": -1}, {"prompt_tokens": [5], "top_k": -2}]
    proc, outs = run_batch(llm, tmp_path, bad)
    expect(proc, 1, "every one of the 2 requests", "key 'seed': must be in "
           "[0, 9223372036854775807], got -1",
           "key 'top_k': must be in [-1, 2147483647], got -2")
    assert [o["finish_reason"] for o in outs] == ["error", "error"]
    good = {"prompt_tokens": [5], "max_new_tokens": 2, "top_k": -1, "seed": 3}
    proc, outs = run_batch(llm, tmp_path, [good] + bad)
    assert proc.returncode == 0, describe(proc)  # partly failed: 0, as documented
    assert [o["finish_reason"] for o in outs] == ["length", "error", "error"]
    assert "exit code is 0 when at" in ingot("generate", "--help").stdout


@pytest.mark.parametrize("flag, key, value, ok", [
    ("--seed", "seed", -1, False), ("--seed", "seed", 2**63 - 1, True),
    ("--top-k", "top_k", -1, True), ("--top-k", "top_k", -2, False),
    ("--max-new-tokens", "max_new_tokens", -1, False),
])
def test_flag_and_batch_line_agree(llm, tmp_path, flag, key, value, ok):
    length = [] if key == "max_new_tokens" else ["--max-new-tokens", "1"]
    cli = ingot("generate", llm["art"], "--prompt-tokens", "5", *length,
                flag, value)
    proc, outs = run_batch(llm, tmp_path, [{"prompt_tokens": [5],
                                            "max_new_tokens": 1, key: value}])
    assert (cli.returncode == 0) == ok, describe(cli)
    assert (proc.returncode == 0) == ok, describe(proc)
    if not ok:
        assert cli.returncode == 2 and "expected an integer in" in cli.stderr
        assert f"key '{key}': must be in" in outs[0]["error"]


# -- 10: the trace's rename names its real error ---------------------------------
def test_trace_rename_error_is_named(llm, tmp_path):
    trace = tmp_path / "t.json"
    trace.mkdir()  # rename(2) onto a directory fails with EISDIR
    proc = ingot("profile", llm["art"], "--no-probe", "--prompt-len", "4",
                 "--gen", "2", "--trace", trace)
    expect(proc, 1, f"cannot write the trace for --trace: {trace}: cannot "
                    "rename the temporary file")
    assert "into place: Is a directory" in proc.stderr
    assert not list(tmp_path.glob("t.json.tmp-*")), "the temp file was left"
    assert "Success" not in proc.stderr
