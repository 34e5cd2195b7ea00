"""What the CUDA e2e tests share: whether the toolkit is here, whether a
driver is, and an ELF reader of the tests' own (independent of ingot's) for
the cubins an artifact holds."""
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from ingot_testlib import describe, ingot

F32 = np.float32
TARGETS = "cpu,cuda:sm_80,cuda:sm_90"
EM_CUDA = 190
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
# A CUDA build needs the toolkit's libdevice and nvJitLink (not a GPU).
needs_toolkit = pytest.mark.skipif(
    not (CUDA_HOME / "nvvm/libdevice/libdevice.10.bc").exists()
    or not list((CUDA_HOME / "lib64").glob("libnvJitLink.so*")),
    reason=f"no CUDA toolkit at {CUDA_HOME}")



def elf_kernels(data):
    """(e_machine, sm number, global function names) of a 64-bit ELF."""
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF"
    abi_version = data[8]
    machine, = struct.unpack_from("<H", data, 18)
    flags, = struct.unpack_from("<I", data, 48)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    names = set()
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            name, info, _, shndx = struct.unpack_from("<IBBH", data, off)
            if info >> 4 == 1 and info & 0xF == 2 and shndx != 0:
                end = data.index(b"\0", strtab[4] + name)
                names.add(data[strtab[4] + name:end].decode())
    # CUDA 12.8+ writes ELF ABI version 8 with the SM number in bits 8-15.
    sm = (flags >> 8) & 0xFF if abi_version >= 8 else flags & 0xFF
    return machine, sm, names



def inspect_json(art):
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)



def have_cuda_driver():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False

