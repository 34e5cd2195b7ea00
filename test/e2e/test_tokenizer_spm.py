"""SentencePiece-style BPE: `ingot tokenize` against Hugging Face
`tokenizers`, id for id, for tokenizer.json files and for GGUF "llama"
vocabularies.

The tokenizers are hf_tokenizers.py's SPM_STYLES, trained with `tokenizers`
and laid out like Llama-2's (special tokens, 256 <0xXX> byte tokens, then
learned pieces): the Llama-2 normalizer (Prepend + Replace), a Metaspace
pre-tokenizer with and without split, Gemma's Replace without a prefix;
byte fallback on, or off with an unknown token. Each is packed with
`ingot-pack-tokenizer` and both sides encode and decode test_tokenizer.py's
CASES (ASCII, digits, whitespace runs, leading spaces, CJK and emoji that
need byte fallback, added tokens inside text) plus the "▁"-specific cases
below and random text.

A GGUF holds no merges: llama.cpp merges the adjacent pair whose
concatenation is the best-scoring token. spm_gguf.py writes a one-layer
llama whose vocabulary is a trained tokenizer's, scored so that this order
is the merges' (hf_tokenizers.spm_scores); the reference is the
tokenizer.json Hugging Face's converter would derive from such a
vocabulary: every pair that makes a token, ranked by score
(hf_tokenizers.complete_merges).
"""
import json
import random
import sys

import pytest

from ingot_testlib import SOURCE_DIR, assert_clean_failure, describe, ingot
from test_tokenizer import CASES, FUZZ_PIECES, check_text, decode, encode, pack

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
from hf_tokenizers import (SPM_STYLES, complete_merges, spm_scores,  # noqa: E402
                           tokenizer_config, tokenizer_for)
from spm_gguf import write_spm_gguf  # noqa: E402

SPM_CASES = [
    "\u2581", "\u2581\u2581x", "\u2581already marked", " \u2581x", "x \u2581 y",
    "<s>", "<s>text</s>", "<s> spaced</s> ", "x<s>y", "<s><s>", "a<unk>b",
    "<|im_start|>user\nhi<|im_end|>", "<0x41> is a byte token's name",
    "<0xE6><0x97>", "  two leading", " one leading", "\n\nnewlines first",
    "the capital of France is Paris", "The The the THE", "a  b   c    d",
    "\u00e9\u00e8 \u00ea", "\u65e5\u672c \u65e5\u672c\u65e5", "\U0001F600 \U0001F600x",
    "\u0000", "\x7f\x80", "end with space ",
]
TEXTS = CASES + SPM_CASES
COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]


def save(tok, style, directory):
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(
        json.dumps(tokenizer_config(style)))
    return directory


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """style -> (HF Tokenizer, artifact packed from its tokenizer.json)."""
    root = tmp_path_factory.mktemp("spm")
    out = {}
    for style in SPM_STYLES:
        tok = tokenizer_for(style)
        proc = pack(save(tok, style, root / style), root / f"{style}.ingot")
        assert proc.returncode == 0, proc.stderr
        out[style] = (tok, root / f"{style}.ingot")
    return out


def random_texts(seed):
    rng = random.Random(seed)
    pool = FUZZ_PIECES + ["\u2581", "<s>", "</s>", "  ", "x"] + [
        chr(rng.randrange(0x20, 0x3000)) for _ in range(200)]
    return ["".join(rng.choice(pool) for _ in range(n)) for n in [3, 10, 30, 100, 3000]]


@pytest.mark.parametrize("style", list(SPM_STYLES))
def test_encode_and_decode_match_hf(packed, style, tmp_path):
    hf, art = packed[style]
    for text in TEXTS + random_texts(style):
        check_text(hf, art, text, tmp_path)


@pytest.mark.parametrize("style", list(SPM_STYLES))
def test_every_token_decodes_like_hf(packed, style):
    hf, art = packed[style]
    # Each token between two plain ones, so that a lone byte token is its
    # own U+FFFD; and a sample of tokens first of all, where the prefix
    # space is stripped (or every "▁" of the token dropped).
    sep = hf.encode("|", add_special_tokens=False).ids
    ids = []
    for i in range(hf.get_vocab_size()):
        ids += [i] + sep
    assert decode(art, ids) == hf.decode(ids, skip_special_tokens=False)
    rng = random.Random(style)
    for i in [0, 1, 2, 3] + rng.sample(range(hf.get_vocab_size()), 40):
        assert decode(art, [i] + sep) == hf.decode(
            [i] + sep, skip_special_tokens=False), i


@pytest.mark.parametrize("style", ["llama2", "gemma"])
def test_byte_runs_decode_like_hf(packed, style):
    """A run of byte tokens is its bytes when they are valid UTF-8, else one
    U+FFFD per byte (the ByteFallback decoder, not from_utf8_lossy)."""
    hf, art = packed[style]
    byte = lambda b: hf.token_to_id(f"<0x{b:02X}>")  # noqa: E731
    ri = [byte(b) for b in "日".encode()]  # e6 97 a5
    word = hf.encode(" the", add_special_tokens=False).ids
    for case in [ri, ri[:2], ri[::-1], ri + ri[:1], word + ri[:1] + word,
                 [byte(0x20)] + word, [byte(0x41), byte(0xC3), byte(0xA9)],
                 ri[:1] + ri]:
        assert decode(art, case) == hf.decode(case, skip_special_tokens=False), case
    # Ids past the vocabulary decode to nothing in HF; `ingot tokenize`
    # refuses them (test_cli_hostile.py), so they are not compared here.


@pytest.mark.parametrize("style", list(SPM_STYLES))
def test_add_bos_matches_the_post_processor(packed, style, tmp_path):
    hf, art = packed[style]
    for text in ["Hello world", "", "<s>x", " lead"]:
        assert encode(art, text, tmp_path, "--add-bos") == hf.encode(text).ids


# -----------------------------------------------------------------------------
# GGUF "llama" vocabularies: scores instead of merges
# -----------------------------------------------------------------------------

GGUF_STYLES = {  # style -> the special tokens and add_space_prefix
    "llama2": dict(unk="<unk>", bos="<s>", eos="</s>", space_prefix=True),
    "gemma": dict(unk="<unk>", bos="<bos>", eos="<eos>", space_prefix=False),
}


def compile_gguf(path, out):
    return ingot("compile", path, "-o", out, *COMPILE_FLAGS, timeout=300)


@pytest.fixture(scope="module")
def gguf_vocabs(tmp_path_factory):
    """style -> (reference HF Tokenizer with complete merges, artifact
    compiled from the GGUF)."""
    root = tmp_path_factory.mktemp("spm_gguf")
    out = {}
    for style in GGUF_STYLES:
        tok = tokenizer_for(style)
        scores = spm_scores(tok)
        path = write_spm_gguf(root / f"{style}.gguf", tok, scores,
                              **GGUF_STYLES[style])
        proc = compile_gguf(path, root / f"{style}.ingot")
        assert proc.returncode == 0, describe(proc)
        out[style] = (complete_merges(tok, scores), root / f"{style}.ingot")
    return out


@pytest.mark.parametrize("style", list(GGUF_STYLES))
def test_gguf_vocabulary_matches_tokenizer_json(gguf_vocabs, style, tmp_path):
    hf, art = gguf_vocabs[style]
    for text in TEXTS + random_texts("gguf" + style):
        check_text(hf, art, text, tmp_path)
    assert encode(art, "Hello", tmp_path, "--add-bos") == hf.encode("Hello").ids


def test_gguf_scores_decide_the_merges(tmp_path):
    """With the merged tokens' scores reversed, later merges win: the ids
    must change (the comparison above would notice ignored scores)."""
    tok = tokenizer_for("llama2")
    scores = spm_scores(tok)
    floor = min(scores)
    flipped = [s if s == floor else -(len(scores) + s) for s in scores]
    path = write_spm_gguf(tmp_path / "f.gguf", tok, flipped)
    proc = compile_gguf(path, tmp_path / "f.ingot")
    assert proc.returncode == 0, describe(proc)
    hf = complete_merges(tok, scores)
    text = "The capital of France is Paris. The quick brown fox."
    assert encode(tmp_path / "f.ingot", text, tmp_path) != hf.encode(
        text, add_special_tokens=False).ids


# -----------------------------------------------------------------------------
# What is refused, by name
# -----------------------------------------------------------------------------

MARK = "\u2581"
REPLACE = {"type": "Replace", "pattern": {"String": MARK}, "content": " "}


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.update(normalizer={"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": MARK},
        {"type": "Replace", "pattern": {"String": " "}, "content": MARK},
        {"type": "NFKC"}]}),
     "normalizer Sequence[Prepend, Replace, NFKC] is not supported for a "
     "SentencePiece-style tokenizer"),
    (lambda d: d.update(normalizer=None, pre_tokenizer={
        "type": "Metaspace", "replacement": "_", "prepend_scheme": "first",
        "split": False}),
     "pre_tokenizer Metaspace has a replacement or prepend_scheme"),
    (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}),
     "pre_tokenizer Whitespace after the normalizer is not supported"),
    (lambda d: d.update(decoder={"type": "Sequence", "decoders": [
        REPLACE, {"type": "ByteFallback"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}),
     "decoder Sequence[Replace, ByteFallback, Strip] is not supported"),
    (lambda d: d.update(decoder=None), "decoder (none) is not supported"),
    (lambda d: d["model"].update(unk_token="<nope>"),
     "model.unk_token '<nope>' is not in model.vocab"),
    (lambda d: d["model"].update(type="Unigram"),
     "model.type is 'Unigram'; supported: BPE"),
    (lambda d: d["added_tokens"][1].update(normalized=True),
     "added token '<s>' is normalized, which ingot does not support with a "
     "normalizer"),
])
def test_unsupported_sentencepiece_tokenizers_are_refused(tmp_path, edit, message):
    directory = save(tokenizer_for("llama2"), "llama2", tmp_path / "t")
    data = json.loads((directory / "tokenizer.json").read_text())
    edit(data)
    (directory / "tokenizer.json").write_text(json.dumps(data))
    proc = pack(directory, tmp_path / "t.ingot")
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert not (tmp_path / "t.ingot").exists()


def drop_byte_tokens(meta):
    types = meta["tokenizer.ggml.token_type"]
    meta["tokenizer.ggml.token_type"] = ([1 if t == 6 else t for t in types[0]],
                                         *types[1:])


def misname_byte_token(meta):
    tokens = meta["tokenizer.ggml.tokens"]
    names = list(tokens[0])
    names[names.index("<0x41>")] = "<0x41 >"
    meta["tokenizer.ggml.tokens"] = (names, *tokens[1:])


@pytest.mark.parametrize("edit,message", [
    (drop_byte_tokens, "metadata 'tokenizer.ggml.model' is 'llama' "
                       "(SentencePiece), but the vocabulary has no byte token "
                       "<0x00>"),
    (misname_byte_token, "token 68 '<0x41 >' has type byte but is not of the "
                         "form <0xXX>"),
    (lambda m: m.update({"tokenizer.ggml.scores": ([0.0], *m["tokenizer.ggml.scores"][1:])}),
     "metadata 'tokenizer.ggml.scores' has 1 entries for"),
    (lambda m: m.update({"tokenizer.ggml.model": ("bert", m["tokenizer.ggml.model"][1])}),
     "'bert', which is not supported — supported: gpt2 (byte-level BPE), "
     "llama (SentencePiece BPE)"),
])
def test_unsupported_gguf_vocabularies_are_refused(tmp_path, edit, message):
    tok = tokenizer_for("llama2")
    path = write_spm_gguf(tmp_path / "bad.gguf", tok, spm_scores(tok), edit=edit)
    proc = compile_gguf(path, tmp_path / "bad.ingot")
    assert_clean_failure(proc)
    assert message in proc.stderr, describe(proc)
    assert not (tmp_path / "bad.ingot").exists()
