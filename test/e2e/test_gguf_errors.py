"""`ingot compile model.gguf` on damaged and unsupported GGUF files (made
from a valid tiny one, test/fixtures/gguf_models.py, by editing its
metadata or bytes): each must exit 1 naming the file and the key or tensor,
and leave no artifact behind."""
import struct
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, assert_clean_failure, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import gguf_models  # noqa: E402
from gguf import GGMLQuantizationType as QT  # noqa: E402
from gguf import GGUFValueType as VT  # noqa: E402

COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]


# -----------------------------------------------------------------------------
# Damaged and unsupported files
# -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The F32 llama: metadata and tensors to edit, and its bytes to patch."""
    case = gguf_models.make_case("llama", "F32", tmp_path_factory.mktemp("base"))
    return case, case.gguf.read_bytes()


def tensor_info_at(data, name):
    """(start of the name's length prefix, offset of its data-offset field)
    of tensor `name` in the tensor infos: u64 length, name, u32 rank,
    rank x u64 dims, u32 type, u64 offset."""
    raw = name.encode()
    start = data.find(struct.pack("<Q", len(raw)) + raw)
    assert start > 0, name
    rank_at = start + 8 + len(raw)
    (rank,) = struct.unpack_from("<I", data, rank_at)
    return start, rank_at + 4 + 8 * rank + 4


def with_metadata(case, changes):
    """The case's metadata with keys replaced (None: deleted)."""
    meta = dict(case.metadata)
    for key, value in changes.items():
        if value is None:
            del meta[key]
        else:
            meta[key] = value
    return meta, case.tensors


def variant(kind, case, data):
    """(bytes, or (metadata, tensors) for write_gguf) of one broken file."""
    if kind == "bad_magic":
        return b"GGUX" + data[4:]
    if kind == "version_1":
        return data[:4] + struct.pack("<I", 1) + data[8:]
    if kind == "truncated":
        start, _ = tensor_info_at(data, "blk.0.attn_q.weight")
        return data[:start + 30]  # after the name, 3 bytes into its rank
    if kind == "overlap":
        _, at = tensor_info_at(data, "blk.0.attn_norm.weight")
        _, move = tensor_info_at(data, "blk.0.ffn_norm.weight")
        return data[:move] + data[at:at + 8] + data[move + 8:]
    if kind == "unknown_arch":
        return with_metadata(case, {"general.architecture": ("mamba", VT.STRING)})
    if kind == "spm_without_byte_tokens":
        # A SentencePiece vocabulary needs its 256 <0xXX> byte tokens.
        return with_metadata(case, {"tokenizer.ggml.model": ("llama", VT.STRING)})
    if kind == "missing_key":
        return with_metadata(case, {"llama.block_count": None})
    if kind == "unknown_tensor":
        extra = ("blk.0.attn_qkv.weight", np.ones((8, 64), np.float32), QT.F32)
        return case.metadata, case.tensors + [extra]
    if kind == "huge_block_count":  # bounded before anything is sized by it
        return with_metadata(case, {"llama.block_count": (2**31 - 1, VT.UINT32)})
    if kind == "extra_layer":  # the file's blk.1.* beyond block_count 1
        return with_metadata(case, {"llama.block_count": (1, VT.UINT32)})
    if kind in ("nan_weight", "permuted_nan"):
        # attn_q's rows are permuted for llama; the element is the file's.
        name = "blk.0.ffn_up.weight" if kind == "nan_weight" else "blk.0.attn_q.weight"
        def poisoned(t):
            if t[0] != name:
                return t
            data = np.array(t[1], dtype=np.float32)
            data.reshape(-1)[123 if kind == "nan_weight" else 200] = np.nan
            return (name, data, t[2])
        return case.metadata, [poisoned(t) for t in case.tensors]
    assert kind == "iq2_xxs"  # one 256-value IQ2_XXS block per row (66 bytes)
    bad = ("blk.1.ffn_up.weight", np.full((128, 66), 7, np.uint8), QT.IQ2_XXS)
    return case.metadata, [bad if t[0] == bad[0] else t for t in case.tensors]


ERRORS = {
    "bad_magic": ["not a GGUF file"],
    "version_1": ["GGUF version 1", "supported: 2, 3"],
    "truncated": ["truncated", "tensor"],
    "overlap": ["'blk.0.attn_norm.weight'", "'blk.0.ffn_norm.weight'", "overlap"],
    "unknown_arch": ["'general.architecture'", "'mamba'", "supported: llama, qwen2"],
    "spm_without_byte_tokens": ["'tokenizer.ggml.model'", "'llama'", "byte token <0x00>"],
    "missing_key": ["'llama.block_count'", "missing"],
    "unknown_tensor": ["'blk.0.attn_qkv.weight'", "not one the llama importer knows"],
    "iq2_xxs": ["'blk.1.ffn_up.weight'", "16", "does not read", "Q4_K"],
    "huge_block_count": ["metadata 'llama.block_count' is 2147483647",
                         "out of range (expected 1..1024)"],
    "extra_layer": ["tensor 'blk.1.", "is for layer 1", "num_hidden_layers = 1"],
    "nan_weight": ["tensor 'blk.0.ffn_up.weight' has a NaN at element 123"],
    "permuted_nan": ["tensor 'blk.0.attn_q.weight' has a NaN at element 200"],
}
@pytest.mark.parametrize("kind", list(ERRORS))
def test_broken_file_is_a_clean_error(kind, base, tmp_path):
    case, data = base
    path = tmp_path / f"{kind}.gguf"
    broken = variant(kind, case, data)
    if isinstance(broken, bytes):
        path.write_bytes(broken)
    else:
        gguf_models.write_gguf(path, *broken)
    proc = ingot("compile", path, "-o", tmp_path / "out.ingot", *COMPILE_FLAGS)
    assert_clean_failure(proc)
    assert str(path) in proc.stderr, describe(proc)
    for text in ERRORS[kind]:
        assert text in proc.stderr, describe(proc)
    assert not (tmp_path / "out.ingot").exists()


# Block-quantised tensors are kept as stored blocks, not widened: a NaN or
# infinite scale in one block is found all the same. (type, byte offset of
# the poisoned f16 in its block, its bits, what the message says)
BLOCK_POISON = {
    "Q8_0": (34, 0, 0x7E00, "a NaN"),        # d of the block
    "Q4_1": (20, 2, 0x7C00, "an infinity"),  # m of the block
}


@pytest.mark.parametrize("type_name", list(BLOCK_POISON))
def test_non_finite_block_scale_is_refused(type_name, tmp_path):
    case = gguf_models.make_case("llama", type_name, tmp_path / "src")
    block_bytes, at, bits, what = BLOCK_POISON[type_name]
    name = "blk.0.ffn_up.weight"
    tensors = []
    for t in case.tensors:
        if t[0] == name:
            data = np.array(t[1], dtype=np.uint8)  # [rows, row bytes]
            row, block = 1, data.shape[1] // block_bytes - 1
            struct.pack_into("<H", data[row], block * block_bytes + at, bits)
            k = data.shape[1] // block_bytes * 32
            element = row * k + block * 32
            t = (name, data, t[2])
        tensors.append(t)
    path = tmp_path / f"poisoned-{type_name}.gguf"
    gguf_models.write_gguf(path, case.metadata, tensors)
    out = tmp_path / "out.ingot"
    proc = ingot("compile", path, "-o", out, *COMPILE_FLAGS)
    assert_clean_failure(proc)
    assert f"tensor '{name}' has {what} at element {element}" in proc.stderr, \
        describe(proc)
    assert not out.exists()
    # The unpoisoned file compiles: the scan does not refuse valid blocks.
    ok = ingot("compile", case.gguf, "-o", out, *COMPILE_FLAGS)
    assert ok.returncode == 0, describe(ok)
