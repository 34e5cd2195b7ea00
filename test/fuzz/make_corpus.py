"""Writes the fuzz targets' fixed data (test/fuzz/data/) and seed corpora
(test/fuzz/corpus/<target>/), deterministically, from the test fixtures:

    .venv/bin/python test/fuzz/make_corpus.py [--ingot build/bin/ingot]
        [--only-artifacts]

--only-artifacts rewrites just the artifact and manifest corpora, which
change whenever the artifact format does (kArtifactFormatVersion).

The seeds are small valid inputs of every format and variety the fixtures
know (ONNX graphs, HF configs and safetensors of several dtypes, tokenizers
of every style, GGUF files of several block types, artifacts and their
manifests, OpenAI request bodies, batch lines, CLI values), so that
libFuzzer starts from deep inside each parser. Inputs of bugs found by
fuzzing are added beside them by hand (named crash-*), never by this
script, and are kept when it reruns.
"""
import argparse
import json
import struct
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "test" / "fixtures"))
import gguf_models  # noqa: E402
import hf_models  # noqa: E402
import hf_tokenizers  # noqa: E402

# A model small enough that each fuzz execution compiles it in milliseconds.
MICRO = dict(HIDDEN=32, HEADS=2, KV_HEADS=1, HEAD_DIM=16, LAYERS=1, INTERMEDIATE=64)


def micro_hf(out_dir, case):
    for key, value in MICRO.items():
        setattr(hf_models, key, value)
    return hf_models.make_model(case, out_dir)


def seed(target, name, data):
    path = HERE / "corpus" / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def onnx_models():
    """A few graphs covering elementwise, matmul, shape and reduction ops."""
    f = TensorProto.FLOAT
    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", f, [8, 8], rng.standard_normal(64).astype(np.float32))
    mlp = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("ReduceSum", ["r"], ["y"], name="sum", keepdims=1)],
        "mlp", [helper.make_tensor_value_info("x", f, ["batch", 8])],
        [helper.make_tensor_value_info("y", f, None)], [w])
    shape = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
         helper.make_node("Transpose", ["r"], ["t"], name="tr", perm=[1, 0]),
         helper.make_node("Softmax", ["t"], ["y"], name="sm", axis=-1)],
        "shape", [helper.make_tensor_value_info("x", f, [4, 6])],
        [helper.make_tensor_value_info("y", f, [6, 4])])
    norm = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], name="ln",
                          axis=-1, epsilon=1e-5),
         helper.make_node("Gelu", ["n"], ["y"], name="gelu", domain="")],
        "norm", [helper.make_tensor_value_info("x", f, [2, 3, 8])],
        [helper.make_tensor_value_info("y", f, [2, 3, 8])],
        [helper.make_tensor("g", f, [8], np.ones(8, np.float32)),
         helper.make_tensor("b", f, [8], np.zeros(8, np.float32))])
    for name, graph, opset in (("mlp", mlp, 17), ("shape", shape, 17), ("norm", norm, 20)):
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        yield name, model.SerializeToString()


def hf_seeds(work):
    data = HERE / "data" / "hf_micro"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(micro_hf(work, "llama_tied_bf16"), data)
    for case in ("llama_tied_bf16", "qwen2", "gemma2", "phi3", "gpt2", "qwen3", "mistral"):
        path = micro_hf(work, case)
        seed("hf_config", f"{case}.json", (path / "config.json").read_bytes())
        if hf_models.CASES[case]["dtype"] != "F32":  # F32 files are 3x bigger
            seed("safetensors", f"{case}.safetensors",
                 (path / "model.safetensors").read_bytes())
        seed("tokenizer_json", f"{case}.json", (path / "tokenizer.json").read_bytes())


def external_weights_seeds():
    """model.safetensors files for fuzz_external_weights.cpp's fixed
    manifest: the tensors it reads (a F32 [6,3], b BF16 [4,5], c F16 [8],
    d F32 [2,32]), one with an extra tensor and shuffled offsets, and one
    with b in another dtype."""
    rng = np.random.default_rng(17)

    def file(tensors):
        header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
        for name, (dtype, shape, raw) in tensors.items():
            header[name] = {"dtype": dtype, "shape": shape,
                            "data_offsets": [offset, offset + len(raw)]}
            blobs.append(raw)
            offset += len(raw)
        text = json.dumps(header).encode()
        return struct.pack("<Q", len(text)) + text + b"".join(blobs)

    def f32(shape):
        return rng.standard_normal(shape).astype(np.float32)

    bf16 = (f32((4, 5)).view(np.uint32) >> 16).astype(np.uint16).tobytes()
    good = {"a": ("F32", [6, 3], f32((6, 3)).tobytes()),
            "b": ("BF16", [4, 5], bf16),
            "c": ("F16", [8], f32((8,)).astype(np.float16).tobytes()),
            "d": ("F32", [2, 32], f32((2, 32)).tobytes())}
    seed("external_weights", "good.safetensors", file(good))
    extra = dict(reversed(list(good.items())))
    extra["e"] = ("I64", [3], np.arange(3, dtype=np.int64).tobytes())
    seed("external_weights", "extra.safetensors", file(extra))
    other = dict(good, b=("F32", [4, 5], f32((4, 5)).tobytes()))
    seed("external_weights", "other_dtype.safetensors", file(other))


def gguf_seeds(work):
    micro = {"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 2,
             "num_key_value_heads": 1, "num_hidden_layers": 1}
    for case in ("llama", "qwen2"):
        gguf_models.CASES[case]["config"] = dict(gguf_models.CASES[case]["config"], **micro)
        for qtype in ("Q8_0", "Q4_1", "Q5_0"):
            made = gguf_models.make_case(case, qtype, work)
            seed("gguf", f"{case}-{qtype}.gguf", Path(made.gguf).read_bytes())


def text_seeds():
    texts = ["Hello, world!", "  leading spaces\tand tabs\n\nnew lines",
             "ünïcödé 日本語 emoji 🙂 and digits 12345", "<|im_start|>user\nhi<|im_end|>",
             "a" * 200, ""]
    for i, text in enumerate(texts):
        # The first byte picks the mode (fuzz_tokenizer_encode.cpp): 0 text,
        # 1 ids, 2 chat messages split by NUL.
        seed("tokenizer_encode", f"text-{i}", b"\x00" + text.encode())
    seed("tokenizer_encode", "ids",
         b"\x01" + np.arange(0, 64, 3, dtype=np.int32).tobytes())
    seed("tokenizer_encode", "chat", b"\x05be brief\0hi there\0hello")
    bodies = [{"model": "m", "prompt": "Hello", "max_tokens": 4, "temperature": 0},
              {"model": "m", "prompt": ["a", "b"], "n": 2, "logprobs": 2, "stream": True,
               "stream_options": {"include_usage": True}},
              {"model": "m", "messages": [{"role": "system", "content": "be brief"},
                                          {"role": "user", "content": "hi"}],
               "top_p": 0.9, "seed": 3, "stop": ["\n"]},
              {"model": "m", "prompt": [1, 2, 3], "max_tokens": 2}]
    for i, body in enumerate(bodies):
        chat = "messages" in body
        seed("openai_request", f"body-{i}", bytes([1 if chat else 0]) + json.dumps(body).encode())
    lines = ['{"prompt": "hi", "max_new_tokens": 4}',
             '{"prompt": "x", "temperature": 0.7, "top_k": 5, "top_p": 0.9, "seed": 1}',
             '{"messages": [{"role": "user", "content": "hi"}], "stop": ["."]}',
             '[1, 2.5e3, -0, true, false, null, "\\u00e9\\ud83d\\ude00"]']
    for i, line in enumerate(lines):
        seed("batch_json", f"line-{i}", line)
    for i, value in enumerate(["16", "-1", "9223372036854775807", "x=1,2,3", "batch=4",
                               "input_ids=1,tokens", "0x10", " 7", "1e3"]):
        seed("cli_values", f"value-{i}", value)


def artifact_seeds(ingot, work):
    """Artifacts compiled by the built `ingot`, and their manifests (with
    the target's selector byte first, see fuzz_manifest.cpp)."""
    outputs = []
    onnx_path = Path(work) / "mlp.onnx"
    onnx_path.write_bytes(dict(onnx_models())["mlp"])
    for name, src in (("micro", HERE / "data" / "hf_micro"), ("mlp", onnx_path)):
        out = Path(work) / f"{name}.ingot"
        subprocess.run([ingot, "compile", str(src), "-o", str(out)], check=True)
        seed("artifact", f"{name}.ingot", out.read_bytes())
        outputs.append(out)
    shutil.copy(onnx_path, HERE / "data" / "mlp.onnx")
    for selector, out in enumerate(outputs):
        raw = out.read_bytes()
        seed("manifest", f"{out.stem}.manifest", bytes([selector]) + manifest_bytes(raw))


def manifest_bytes(raw):
    """The manifest section of an artifact (docs/artifact-format.md)."""
    import struct
    count = struct.unpack_from("<I", raw, 16)[0]
    cv_size = struct.unpack_from("<I", raw, 20)[0]
    table = 24 + (cv_size + 7) // 8 * 8
    for i in range(count):
        entry = raw[table + 64 * i: table + 64 * (i + 1)]
        name = entry[:40].rstrip(b"\0").decode()
        offset, size = struct.unpack_from("<QQ", entry, 40)
        if name == "manifest":
            return raw[offset:offset + size]
    raise SystemExit("no manifest section")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ingot", default=str(ROOT / "build" / "bin" / "ingot"))
    parser.add_argument("--only-artifacts", action="store_true",
                        help="rewrite only corpus/artifact and corpus/manifest")
    args = parser.parse_args()
    for target in (HERE / "corpus").glob("*"):
        if args.only_artifacts and target.name not in ("artifact", "manifest"):
            continue
        for f in target.iterdir():
            if not f.name.startswith("crash-"):
                f.unlink()
    with tempfile.TemporaryDirectory() as work:
        if args.only_artifacts:
            artifact_seeds(args.ingot, work)
            return 0
        for name, data in onnx_models():
            seed("onnx", f"{name}.onnx", data)
        hf_seeds(Path(work) / "hf")
        gguf_seeds(Path(work) / "gguf")
        text_seeds()
        external_weights_seeds()
        artifact_seeds(args.ingot, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
