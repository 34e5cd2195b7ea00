"""Write a GGUF holding the first N transformer blocks of another.

The GPU check carries at most 64 MiB to the lent machine; the bundled
SmolLM2 Q4_1 file is 94 MiB. Its first blocks, with the real embedding,
norms, tokenizer and metadata (block_count set to N), are a model of the
same shapes and weight formats that fits: every kernel of the full model
runs, on real weights, only fewer times.

    python3 scripts/gguf_slice.py IN.gguf OUT.gguf N [CONFIG.json]

CONFIG.json, when given, receives the slice's Hugging Face config (the
GPU check's PyTorch peer builds a model of the same shapes from it).
"""
import json
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter


def copy_field(writer, field, blocks_key, blocks):
    if field.name.startswith("GGUF.") or field.name == "general.architecture":
        return  # the writer adds these itself
    kind = field.types[0]
    value = blocks if field.name == blocks_key else field.contents()
    if kind == GGUFValueType.ARRAY:
        writer.add_array(field.name, value)
    else:
        writer.add_key_value(field.name, value, kind)


def main(argv):
    src, dst, blocks = argv[1], argv[2], int(argv[3])
    reader = GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    blocks_key = f"{arch}.block_count"
    total = reader.fields[blocks_key].contents()
    if not 0 < blocks <= total:
        sys.exit(f"gguf_slice: {src} has {total} blocks; asked for {blocks}")
    writer = GGUFWriter(dst, arch)
    for field in reader.fields.values():
        copy_field(writer, field, blocks_key, blocks)
    kept = [t for t in reader.tensors
            if not t.name.startswith("blk.")
            or int(t.name.split(".")[1]) < blocks]
    for t in kept:
        writer.add_tensor(t.name, np.asarray(t.data),
                          raw_shape=np.asarray(t.data).shape,
                          raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if len(argv) > 4:
        sys.path.insert(0, str(Path(__file__).parent))
        import prepare_smollm2 as hf
        tied = not any(t.name == "output.weight" for t in kept)
        config = hf.make_config(hf.read_metadata(GGUFReader(dst)), tied)
        Path(argv[4]).write_text(json.dumps(config, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv)
