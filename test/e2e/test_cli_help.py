"""`ingot --help` lists the subcommands and `ingot SUB --help` lists every
flag of each with its default, exiting 0 (issue 18); an unknown flag is a
usage error (exit 2) that names it. FLAGS is the one table of what every
subcommand accepts: a flag the binary has and the table lacks fails the
test as much as one the table has and the binary lacks."""
import re

import pytest

from ingot_testlib import describe, ingot

# subcommand -> {flag: the default its help shows, or None for a flag that
# takes no value or has no default}.
FLAGS = {
    "compile": {
        "-o,--output": None, "--target": "cpu", "--shape": None,
        "--max-dim": "512", "--compile-to": None, "--dump-ir": None,
        "--fusion": "on", "--pack-weights": "off", "--kv-layout": "target's",
        "--kv-cache-dtype,--kv-dtype": "float32",
        "--quant": "none", "--quant-scheme": "asym", "--quant-lm-head": "same",
        "--quant-embed": "none",
        "--act-quant": "none",
        "--quant-exclude": None, "--group-size": "32", "--block-size": "16",
        "--max-tokens-per-step": "256", "--max-seqs": "64",
        "--max-context": "model's", "--list-onnx-ops": None,
        "--list-hf-architectures": None, "--list-gguf-architectures": None,
        "--weights": "embedded",
    },
    "generate": {
        "--max-new-tokens": "model", "--top-k": "model", "--seed": "0",
        "--threads": "0", "--kv-blocks": "auto", "--kv-cache-mb": "auto",
        "--block-size": "compiled", "--max-tokens-per-step": "compiled",
        "--max-seqs": "compiled", "--prompt": None, "--prompt-tokens": None,
        "--temperature": "model", "--top-p": "model", "--chat": None,
        "--json": None, "--logits-out": None, "--profile": None,
        "--kv-cache-dtype": "auto", "--batch-file": None, "--output": None,
        "--stats-json": None, "--no-prefix-caching": None,
        "--device": "auto", "--gpu-memory-fraction": "0.9", "--weights": None,
    },
    "run": {"--input": None, "--output-dir": None, "--threads": "0",
            "--device": "auto", "--repeat": "0", "--profile": None,
            "--weights": None},
    "inspect": {"--json": None, "--memory": None, "--extract-code": None,
                "--kv-blocks": "auto",
                "--kv-cache-mb": "auto", "--threads": "0"},
    "tokenize": {"--text": None, "--text-file": None, "--decode": None,
                 "--add-bos": None, "--json": None},
    "profile": {"--prompt-len": "128", "--gen": "32", "--batch": "1",
                "--threads": "0", "--top": "15", "--trace": None,
                "--by-origin": None, "--no-probe": None, "--weights": None},
    "perplexity": {"--text": None, "--context": "min(512,compiled)",
                   "--stride": "context/2", "--max-tokens": "all",
                   "--threads": "0", "--kv-cache-dtype": "auto",
                   "--json": None, "--weights": None},
    "bench": {
        "--input-len": "128", "--output-len": "128", "--range-ratio": "0",
        "--dataset": None, "--ignore-eos": None, "--num-prompts": "100",
        "--request-rate": "inf", "--max-concurrency": "unlimited",
        "--warmup": "0", "--seed": "0", "--slo": None, "--pp": "off",
        "--tg": "off", "-r": "3", "--threads": "0", "--kv-blocks": "auto",
        "--kv-cache-mb": "auto", "--kv-cache-dtype": "auto",
        "--endpoint": None, "--api-key": None, "--json": None,
        "--plot": None, "--profile": None, "--progress": None,
        "--no-probe": None, "--device": "auto", "--gpu-memory-fraction": "0.9",
        "--weights": None,
    },
    "serve": {
        "--host": "127.0.0.1", "--api-key": "$INGOT_API_KEY",
        "--served-model-name": "file-stem", "--drain-timeout": "30",
        "--port": "8000", "--max-queue": "256", "--max-body-bytes": "8388608",
        "--threads": "0", "--kv-blocks": "auto", "--kv-cache-mb": "auto",
        "--max-tokens-per-step": "compiled", "--max-seqs": "compiled",
        "--kv-cache-dtype": "auto", "--no-kv-prefault": None,
        "--no-prefix-caching": None, "--device": "auto",
        "--gpu-memory-fraction": "0.9", "--weights": None,
    },
}


def listed_commands():
    """The subcommands `ingot --help` lists as part of this build."""
    proc = ingot("--help")
    assert proc.returncode == 0, describe(proc)
    section = proc.stdout.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines()
            if line.strip() and "(not in this build)" not in line]


def help_lines(sub):
    """{flag names as the help writes them: their line} of `ingot SUB --help`."""
    proc = ingot(sub, "--help")
    assert proc.returncode == 0, describe(proc)
    lines = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"  (-[\w-]+(?:,--[\w-]+)?)(?:\s|$)", line)
        if m:
            lines[m.group(1)] = line
    return lines


def test_help_lists_every_subcommand():
    commands = listed_commands()
    assert commands, "ingot --help lists no subcommand"
    assert set(commands) <= set(FLAGS), (
        f"subcommands without a row in FLAGS: {set(commands) - set(FLAGS)}")
    for core in ("generate", "run", "inspect", "tokenize", "bench"):
        assert core in commands


def test_no_arguments_is_a_usage_error():
    proc = ingot()
    assert proc.returncode == 2, describe(proc)
    assert "commands:" in proc.stderr and "generate" in proc.stderr


@pytest.mark.parametrize("sub", sorted(FLAGS))
def test_help_lists_every_flag_with_its_default(sub):
    if sub not in listed_commands():
        pytest.skip(f"this build has no `ingot {sub}`")
    lines = help_lines(sub)
    assert "-h,--help" in lines
    shown = set(lines) - {"-h,--help"}
    assert shown == set(FLAGS[sub]), (
        f"missing from the help: {set(FLAGS[sub]) - shown}; "
        f"not in FLAGS: {shown - set(FLAGS[sub])}")
    for flag, default in FLAGS[sub].items():
        line = lines[flag]
        if default is not None:
            assert f"={default} " in line + " " or f"default {default}" in line, (
                f"{flag}: the help does not show the default {default!r}: "
                f"{line!r}")


@pytest.mark.parametrize("sub", sorted(FLAGS))
def test_unknown_flag_is_a_usage_error(sub):
    if sub not in listed_commands():
        pytest.skip(f"this build has no `ingot {sub}`")
    proc = ingot(sub, "ART.ingot", "--no-such-flag")
    assert proc.returncode == 2, describe(proc)
    assert "error: unknown option '--no-such-flag'" in proc.stderr, describe(proc)


@pytest.mark.parametrize("sub, flag, limits", [
    ("run", "--threads", "0..1024"), ("profile", "--top", "1..100000"),
    ("bench", "-r", "1..10000"), ("serve", "--port", "0..65535"),
])
def test_missing_integer_value_names_the_range(sub, flag, limits):
    if sub not in listed_commands():
        pytest.skip(f"this build has no `ingot {sub}`")
    proc = ingot(sub, "ART.ingot", flag)
    assert proc.returncode == 2, describe(proc)
    assert f"error: {flag} needs a value: expected an integer in {limits}" \
        in proc.stderr, describe(proc)
