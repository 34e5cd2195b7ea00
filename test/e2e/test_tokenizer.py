"""`ingot tokenize` against the Hugging Face `tokenizers` package, id for id.

Byte-level BPE tokenizers of each supported kind are trained here with
`tokenizers` (small vocabularies, so most text is split into many merges and
every rule of the pre-tokenizer matters), packed into artifacts with
`ingot-pack-tokenizer`, and both sides encode and decode the same texts:
unicode of many scripts, combining marks, whitespace runs, digit runs, emoji
with ZWJ sequences, code, contractions, added tokens inside text, invalid
UTF-8 on decode. The real SmolLM2 tokenizer is checked the same way, and
against its GGUF vocabulary, in test_smollm2.py.

Decode convention: ids map to bytes, the bytes are joined, and broken UTF-8
becomes U+FFFD per maximal ill-formed subsequence (Rust's from_utf8_lossy),
which is what `Tokenizer.decode(ids, skip_special_tokens=False)` returns;
unknown ids decode to "".
"""
import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                        normalizers, pre_tokenizers, processors, trainers)

from ingot_testlib import BUILD_DIR, assert_clean_failure, describe, ingot

GPT2_RE = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
           r"|\s+(?!\S)|\s+")
LLAMA3_RE = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
             r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_RE = LLAMA3_RE.replace(r"\p{N}{1,3}", r"\p{N}")

CASES = [
    "", " ", "  ", "\n", "\t", "a", "Hello, world!", "Hello world",
    "  leading spaces", "trailing spaces   ", "trailing newline\n",
    "multi\n\n\nnewlines\n\n", "tabs\tand\t\ttabs\t",
    "mixed \t \n \r\n whitespace  \n  x", "\r\n\r\n", " \n \n ", "a \n\tb",
    "it's they're we've I'm you'll he'd", "IT'S THEY'RE WE'VE I'M YOU'LL HE'D",
    "'s 'S 'll 'LL 'Ll 'lL", "rock'n'roll o'clock ''quoted'' '",
    "don't ' s 'ſ ab'ſt 'ﬆ", "numbers 1 12 123 1234 12345 1234567890",
    "3.14159 1,000,000 -42 +7 1e10 0x1F", "٣٤٥ ५६७ ①②③ ½ Ⅻ x²", "12ab34 a1b2c3",
    "café naïve résumé Ærøskøbing Zürich", "e\u0301 n\u0303 a\u0308\u0304 \u0301x",
    "\u1100\u1161\u11a8 \u212b \u0041\u030a \u0385", "Ǆ ǅ ǆ ﬁ ﬀ ß ẞ",
    "日本語のテキストと中文文本", "한국어 텍스트", "العربية نص مع أرقام ١٢٣", "עברית",
    "ภาษาไทย", "Ελληνικά Русский", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math 𝟙𝟚𝟛",
    "emoji 😀😃 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️", "flags 🇺🇸🇯🇵 keycap 1️⃣",
    "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; ++i) { a[i] += b[i]; }\n\n\n",
    '<html><body class="x">&amp;</body></html>', '{"key": [1, 2, 3], "k": null}',
    "SELECT * FROM t WHERE a='b';", "x=1;y=22;z=333;w=4444",
    "Mr. O'Neil's 2nd-floor flat (No. 42B)", "!!!???...,,,;;;", "\"\"hello\"\"",
    "\u00a0nbsp\u00a0 \u3000ideographic\u2003em\u2028line\u2029para\u0085nel",
    "zero\u200bwidth\u200djoiner", "\u0000nul \u0001 controls \u007f\u001f",
    "\ufeffBOM", "a" * 300 + " " + "b" * 200, "word " * 50,
    "special inline: <|endoftext|> and <|im_start|>user<|im_end|>",
    "<|endoftext|><|endoftext|>", "x<|endoftext|>y", "partial <|endoftext| <|im_",
    "<|begin_of_text|>hi<|eot_id|>", "tool <tool> call</tool> done",
    "an unreachable café world, unreachable!",
]
FUZZ_PIECES = ["a", "Z", "é", "e\u0301", "ß", "日", "語", "😀", "👍🏽", "\u200d",
               "١", "5", "42", "½", " ", "  ", "\t", "\n", "\r\n", "\u00a0",
               "\u3000", "'", "'s", "'LL", "!", "?", ".", "-", "_", "(", ")",
               "<|endoftext|>", "<|im_start|>", "<tool>", "the", " the", "ing"]


def training_corpus():
    rng = random.Random(1)
    lines = list(CASES)
    for _ in range(300):
        lines.append("".join(rng.choice(FUZZ_PIECES + [" the cat", " sat",
                                                       " on the mat."])
                             for _ in range(rng.randint(1, 30))))
    return lines * 3


def train(kind, directory):
    """A tokenizer of `kind` trained on the corpus, saved in directory."""
    bpe = models.BPE(ignore_merges=(kind == "llama3"))
    tok = Tokenizer(bpe)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                          use_regex=kind in ("gpt2", "digits"))
    split = {"llama3": LLAMA3_RE, "qwen2": QWEN2_RE, "gpt2split": GPT2_RE}
    if kind in split:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(split[kind]), "isolated"), byte_level])
    elif kind == "digits":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = byte_level
    if kind == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    specials = {
        "llama3": ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"],
        "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    }.get(kind, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    trainer = trainers.BpeTrainer(
        vocab_size=700, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training_corpus(), trainer)
    if kind != "qwen2":  # normalized added tokens are refused with NFC
        tok.add_tokens(["<tool>", AddedToken("</tool>", normalized=False)])
    config = {"eos_token": specials[-1 if kind != "llama3" else 2]}
    if kind == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            special_tokens=[("<|begin_of_text|>", bos)])
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    if kind == "llama3":
        # Words that are in the vocab without merges leading to them: only
        # ignore_merges makes them one token.
        data = json.loads((directory / "tokenizer.json").read_text())
        vocab = data["model"]["vocab"]
        top = max(list(vocab.values()) +
                  [t["id"] for t in data["added_tokens"]])
        for word in ["Ġunreachable", "Ġcafé", "world"]:
            if word not in vocab:
                top += 1
                vocab[word] = top
        (directory / "tokenizer.json").write_text(json.dumps(data))
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    return Tokenizer.from_file(str(directory / "tokenizer.json"))


def pack(directory, out):
    tool = BUILD_DIR / "bin" / "ingot-pack-tokenizer"
    assert tool.is_file(), f"{tool} not found; build it first (make build)"
    proc = subprocess.run([str(tool), str(directory), str(out)],
                          capture_output=True, text=True, timeout=120)
    return proc


KINDS = ["gpt2", "gpt2split", "llama3", "qwen2", "digits"]


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    """kind -> (HF Tokenizer, artifact path)."""
    root = tmp_path_factory.mktemp("tok")
    out = {}
    for kind in KINDS:
        hf = train(kind, root / kind)
        art = root / f"{kind}.ingot"
        proc = pack(root / kind, art)
        assert proc.returncode == 0, proc.stderr
        out[kind] = (hf, art)
    return out


def encode(art, text, tmp_path, *flags):
    f = tmp_path / "text.txt"
    f.write_bytes(text.encode("utf-8", "surrogatepass"))
    proc = ingot("tokenize", art, "--text-file", f, "--json", *flags)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)["ids"]


def decode(art, ids):
    proc = ingot("tokenize", art, "--decode", ",".join(map(str, ids)),
                 "--json")
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)["text"]


def check_text(hf, art, text, tmp_path):
    want = hf.encode(text, add_special_tokens=False).ids
    got = encode(art, text, tmp_path)
    assert got == want, (f"encode {text[:200]!r}\n ingot {got[:60]}\n"
                         f"    hf {want[:60]}")
    want_text = hf.decode(want, skip_special_tokens=False)
    assert decode(art, want) == want_text, f"decode of {text[:200]!r}"


@pytest.mark.parametrize("kind", KINDS)
def test_encode_and_decode_match_hf(tokenizers, kind, tmp_path):
    hf, art = tokenizers[kind]
    for text in CASES:
        check_text(hf, art, text, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_random_text_matches_hf(tokenizers, kind, tmp_path):
    hf, art = tokenizers[kind]
    rng = random.Random(kind)
    pool = FUZZ_PIECES + [chr(rng.randrange(0x20, 0x3000)) for _ in range(200)]
    for n in [3, 10, 30, 100, 3000]:
        text = "".join(rng.choice(pool) for _ in range(n))
        check_text(hf, art, text, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_every_token_decodes_like_hf(tokenizers, kind):
    hf, art = tokenizers[kind]
    # Each token between two copies of a plain ASCII token, so a token that
    # is a broken UTF-8 fragment shows up as its own U+FFFD(s).
    sep = hf.encode("|", add_special_tokens=False).ids
    ids = []
    for i in range(hf.get_vocab_size()):
        ids += [i] + sep
    assert decode(art, ids) == hf.decode(ids, skip_special_tokens=False)


def test_ignore_merges_takes_whole_words_from_the_vocab(tokenizers, tmp_path):
    hf, art = tokenizers["llama3"]
    want = [hf.token_to_id("Ġunreachable")]
    assert hf.encode(" unreachable", add_special_tokens=False).ids == want
    assert encode(art, " unreachable", tmp_path) == want


def probe_tokenizer(directory, kind):
    """Bytes plus, for every byte X, the merges 'Ġ'+X and 'a'+X: a word
    starting with ' ' or 'a' shows in its ids whether the pre-tokenizer kept
    the next character in the same piece, which depends on that character's
    class (\\p{L}, \\p{N}, \\s or other)."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {c: i for i, c in enumerate(sorted(alphabet))}
    merges = []
    for first in ["Ġ", "a"]:
        for c in sorted(alphabet):
            vocab.setdefault(first + c, len(vocab))
            merges.append((first, c))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    split = {"gpt2": GPT2_RE, "llama3": LLAMA3_RE, "qwen2": QWEN2_RE,
             "digits": GPT2_RE}[kind]
    first = (pre_tokenizers.Digits(individual_digits=True) if kind == "digits"
             else pre_tokenizers.Split(Regex(split), "isolated"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([first, pre_tokenizers.ByteLevel(
        add_prefix_space=False, use_regex=kind == "digits")])
    if kind == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    return tok


@pytest.mark.parametrize("kind", ["gpt2", "llama3", "qwen2", "digits"])
def test_unicode_tables_match_tokenizers(kind, tmp_path):
    """Every code point of planes 0-3 and 14 in contexts that separate the
    character classes (and, for qwen2, that NFC would change: followed by
    combining marks): a mismatch with the Unicode version `tokenizers` uses
    (scripts/gen_unicode_tables.py) changes the ids."""
    hf = probe_tokenizer(tmp_path / kind, kind)
    art = tmp_path / f"{kind}.ingot"
    proc = pack(tmp_path / kind, art)
    assert proc.returncode == 0, proc.stderr
    points = [c for c in list(range(0x40000)) + list(range(0xE0000, 0xE1000))
              if not 0xD800 <= c <= 0xDFFF]
    marks = "\u0301\u0323\u0307" if kind == "qwen2" else ""
    for start in range(0, len(points), 40000):
        text = "".join(f" {chr(c)}{marks}a{chr(c)}|"
                       for c in points[start:start + 40000])
        want = hf.encode(text, add_special_tokens=False).ids
        got = encode(art, text, tmp_path)
        if got != want:
            i = next(k for k, (x, y) in enumerate(zip(got, want)) if x != y)
            where = hf.decode(want[max(0, i - 8):i + 8])
            pytest.fail(f"ids differ at {i}, near {where!r}")


def test_broken_utf8_and_unknown_ids(tokenizers):
    hf, art = tokenizers["gpt2"]
    ids = hf.encode("日本語 😀", add_special_tokens=False).ids
    byte_ids = [hf.token_to_id(c) for c in ["æ", "Ĺ", "Ĺ"]]  # e6 97 97
    vocab = hf.get_vocab_size()
    for case in [ids[:1], ids[1:], ids[::-1], byte_ids, byte_ids[:2],
                 byte_ids + ids]:
        assert decode(art, case) == hf.decode(case, skip_special_tokens=False)
    assert decode(art, []) == ""
    # Hugging Face decodes ids outside the vocabulary to nothing; `ingot
    # tokenize` refuses them, naming the id, so a wrong id is never silent.
    for bad in [[vocab] + ids[:1], [10**9], [-1, -5]]:
        proc = ingot("tokenize", art, "--decode", ",".join(map(str, bad)), "--json")
        assert proc.returncode == 1, describe(proc)
        assert f"id {bad[0]} is outside the vocabulary of {vocab} tokens" in proc.stderr


def test_add_bos_matches_the_post_processor(tokenizers, tmp_path):
    hf, art = tokenizers["llama3"]
    for text in ["Hello world", "", "<|eot_id|>x"]:
        assert encode(art, text, tmp_path, "--add-bos") == hf.encode(text).ids
    # A model without a BOS token adds nothing.
    hf, art = tokenizers["gpt2"]
    assert encode(art, "hi", tmp_path, "--add-bos") == hf.encode("hi").ids


def test_plain_output_and_text_argument(tokenizers):
    hf, art = tokenizers["gpt2"]
    proc = ingot("tokenize", art, "--text", "Hello, world!")
    assert proc.returncode == 0, describe(proc)
    want = hf.encode("Hello, world!").ids
    assert proc.stdout == ",".join(map(str, want)) + "\n"
    proc = ingot("tokenize", art, "--decode", " , ".join(map(str, want)))
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout == "Hello, world!\n"


def test_usage_errors(tokenizers, tmp_path):
    _, art = tokenizers["gpt2"]
    for args in [[art], [art, "--text", "a", "--decode", "1"],
                 [art, "--decode", "1,x"], [art, "--decode", "1,,2"],
                 ["--text", "a"], [art, "--text"], [art, "--bogus"]]:
        proc = ingot("tokenize", *args)
        assert proc.returncode == 2, describe(proc)
    proc = ingot("tokenize", tmp_path / "missing.ingot", "--text", "a")
    assert_clean_failure(proc)


def write_tokenizer(directory, edit):
    """A trained gpt2-style tokenizer.json, changed by edit(dict)."""
    train("gpt2", directory)
    path = directory / "tokenizer.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["model"].update(type="Unigram"),
     "tokenizer.json: model.type is 'Unigram'; supported: BPE"),
    (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}),
     "tokenizer.json: pre_tokenizer Whitespace is not supported"),
    (lambda d: d.update(normalizer={"type": "NFKC"}),
     "tokenizer.json: normalizer.type is 'NFKC'; supported: none, NFC"),
    (lambda d: d.update(decoder={"type": "WordPiece"}),
     "tokenizer.json: decoder.type is 'WordPiece'; supported: ByteLevel"),
    (lambda d: d["added_tokens"][0].update(lstrip=True),
     "tokenizer.json: added_tokens[0] ('<|endoftext|>') sets lstrip"),
    (lambda d: d["model"]["merges"].append(["Ġ", "nosuchtoken"]),
     "uses or makes a token that is not in model.vocab"),
    (lambda d: d.update(pre_tokenizer={
        "type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r"\w+"},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False,
             "use_regex": False, "trim_offsets": True}]}),
     "pre_tokenizer Split pattern is not one ingot knows"),
])
def test_unsupported_tokenizers_are_refused(tmp_path, edit, message):
    write_tokenizer(tmp_path / "t", edit)
    proc = pack(tmp_path / "t", tmp_path / "t.ingot")
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert not (tmp_path / "t.ingot").exists()


SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] "
    "!= 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant "
    "named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|"
    "im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|"
    ">' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>"
    "assistant\n' }}{% endif %}")
QWEN_TEMPLATE = (  # the shape of Qwen2.5's: a tools branch comes first
    "{%- if tools %}{{- '<|im_start|>system\\n' }}{%- if messages[0]['role']"
    " == 'system' %}{{- messages[0]['content'] }}{%- else %}{{- 'You are "
    "Qwen.' }}{%- endif %}{%- else %}{%- if messages[0]['role'] == 'system' "
    "%}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>"
    "\\n' }}{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by "
    "Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif "
    "%}{%- endif %}{%- for message in messages %}{{- '<|im_start|>' + "
    "message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}")
LLAMA3_TEMPLATE = (
    "{% for message in messages %}{% set content = '<|start_header_id|>' + "
    "message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim "
    "+ '<|eot_id|>' %}{{ content }}{% endfor %}")


@pytest.mark.parametrize("template,stored", [
    (SMOLLM2_TEMPLATE, b"chatml:You are a helpful AI assistant named SmolLM,"
                       b" trained by Hugging Face"),
    (QWEN_TEMPLATE, b"chatml:You are Qwen, created by Alibaba Cloud. You are "
                    b"a helpful assistant."),
    ("{{'<|im_start|>' + m['role'] + '\n'}}", b"\x06\x00\x00\x00chatml\x00"),
    (LLAMA3_TEMPLATE, b"\x06\x00\x00\x00llama3\x00"),
])
def test_chat_template_is_recognised(tmp_path, template, stored):
    train("gpt2", tmp_path / "t")
    (tmp_path / "t" / "tokenizer_config.json").write_text(json.dumps(
        {"chat_template": template, "eos_token": "<|im_end|>"}))
    proc = pack(tmp_path / "t", tmp_path / "t.ingot")
    assert proc.returncode == 0, proc.stderr
    # tokenizer.chat_template as it sits in the manifest: a FlatBuffers
    # string, 4-byte length, the bytes, a NUL
    assert stored in (tmp_path / "t.ingot").read_bytes()


def test_missing_tokenizer_json_is_named(tmp_path):
    proc = pack(tmp_path, tmp_path / "t.ingot")
    assert proc.returncode == 1
    assert "tokenizer.json: not found in" in proc.stderr
