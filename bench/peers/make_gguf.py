"""Writes F32 and F16 GGUF copies of a quantised GGUF, and Q8_0 / Q4_0 ones
quantised from the F32 copy (for llama.cpp runs on the same weights ingot
compiles).

    python bench/peers/make_gguf.py IN.gguf --out-dir DIR [--types f32,f16]
    python bench/peers/make_gguf.py DIR/<stem>.F32.gguf --out-dir DIR --types q8_0,q4_0

    DIR/<stem>.F32.gguf   every tensor dequantised to float32
    DIR/<stem>.F16.gguf   every 2-D tensor as float16, 1-D ones (norms) float32
    DIR/<stem>.Q8_0.gguf  every 2-D tensor gguf.quants.quantize()d to Q8_0
    DIR/<stem>.Q4_0.gguf  ... to Q4_0 (1-D ones, the norms, stay float32)

Every metadata key/value pair of IN is copied verbatim (raw bytes for
strings, so odd vocabulary entries survive), except general.file_type, which
is set to the new type. Tensors keep their names, order and layout (llama.cpp's
Q/K row permutation included): the values are gguf.quants.dequantize() of the
originals, which is exact in float32; float16 rounds them once more. Q8_0 and
Q4_0 use the gguf package's own quantiser (gguf.quants.quantize, the Python
port of ggml's reference quantize_row_*) on every 2-D tensor, the tied token
embedding (llama.cpp's lm_head too) included, with no importance matrix and
none of llama-quantize's per-tensor type choices (it would make the tied
output tensor Q6_K). A file that already exists is left alone (delete it to
rebuild). Prints each output path on its own line.
"""
import argparse
import sys
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.quants import dequantize, quantize

# key: (general.file_type = llama_ftype, numpy dtype or ggml type of 2-D tensors, file label)
FILE_TYPES = {"f32": (0, np.float32, "F32"), "f16": (1, np.float16, "F16"),
              "q8_0": (7, GGMLQuantizationType.Q8_0, "Q8_0"), "q4_0": (2, GGMLQuantizationType.Q4_0, "Q4_0")}


def field_value(field):
    """A reader field's value in the form GGUFWriter.add_key_value packs:
    scalars as Python numbers, strings as bytes, arrays as lists."""
    main = field.types[0]
    if main == GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == GGUFValueType.STRING:
            return [bytes(field.parts[i]) for i in field.data], sub
        if sub == GGUFValueType.ARRAY:
            raise ValueError(f"{field.name}: nested arrays are not supported")
        return [field.parts[i][0].item() for i in field.data], sub
    if main == GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]), None
    return field.parts[field.data[0]][0].item(), None


def convert(reader, out_path, file_type, dtype):
    arch = bytes(reader.fields["general.architecture"].parts[
        reader.fields["general.architecture"].data[0]]).decode()
    tmp = out_path.with_suffix(out_path.suffix + ".partial")
    writer = GGUFWriter(str(tmp), arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue  # header fields and the architecture: the writer adds them
        value, sub = field_value(field)
        if name == "general.file_type":
            value = file_type
        writer.add_key_value(name, value, field.types[0], sub_type=sub)
    if "general.file_type" not in reader.fields:
        writer.add_key_value("general.file_type", file_type, GGUFValueType.UINT32)
    for t in reader.tensors:
        w = dequantize(t.data, t.tensor_type)
        w = np.asarray(w, dtype=np.float32).reshape(
            tuple(int(d) for d in reversed(t.shape)))
        if w.ndim >= 2 and isinstance(dtype, GGMLQuantizationType):
            block = GGML_QUANT_SIZES[dtype][0]
            if w.shape[-1] % block:
                raise ValueError(f"{t.name}: rows of {w.shape[-1]} are not whole {dtype.name} blocks")
            writer.add_tensor(t.name, quantize(np.ascontiguousarray(w), dtype), raw_dtype=dtype)
            continue
        if w.ndim >= 2:
            w = w.astype(dtype)
        writer.add_tensor(t.name, np.ascontiguousarray(w))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(out_path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gguf", type=Path)
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--types", default="f32,f16", help=",".join(FILE_TYPES))
    args = ap.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = args.gguf.name
    for suffix in (".gguf",):
        stem = stem[: -len(suffix)] if stem.endswith(suffix) else stem
    # "SmolLM2-135M-Instruct.Q4_1" -> "SmolLM2-135M-Instruct"
    base = stem.rsplit(".", 1)[0] if "." in stem else stem
    reader = None
    for key in args.types.split(","):
        file_type, dtype, label = FILE_TYPES[key.strip().lower()]
        out = args.out_dir / f"{base}.{label}.gguf"
        if not out.is_file():
            reader = reader or GGUFReader(str(args.gguf))
            print(f"writing {out}", file=sys.stderr, flush=True)
            convert(reader, out, file_type, dtype)
        print(out)


if __name__ == "__main__":
    main(sys.argv[1:])
