"""Writes F32 and F16 GGUF copies of a quantised GGUF (for llama.cpp runs
on the same weights ingot compiles).

    python bench/peers/make_gguf.py IN.gguf --out-dir DIR [--types f32,f16]

    DIR/<stem>.F32.gguf   every tensor dequantised to float32
    DIR/<stem>.F16.gguf   every 2-D tensor as float16, 1-D ones (norms) float32

Every metadata key/value pair of IN is copied verbatim (raw bytes for
strings, so odd vocabulary entries survive), except general.file_type, which
is set to the new type. Tensors keep their names, order and layout (llama.cpp's
Q/K row permutation included): the values are gguf.quants.dequantize() of the
originals, which is exact in float32; float16 rounds them once more. A file
that already exists is left alone (delete it to rebuild). Prints each output
path on its own line.
"""
import argparse
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.quants import dequantize

FILE_TYPES = {"f32": (0, np.float32, "F32"), "f16": (1, np.float16, "F16")}


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
    ap.add_argument("--types", default="f32,f16")
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
