"""Dependencies run one way: format <- dialects <- passes, codegen <-
compiler, and format <- runtime; tools use the compiler and the runtime's
public headers.

Checks every #include of the C++ sources against that, and the CMake link
lines of the libraries, so a shortcut (the dialect including a runtime
header, the compiler reaching into runtime/src) fails here, not in review.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

FORMAT_HEADERS = {p.name for p in (ROOT / "format/include/ingot").glob("*.h")}
RUNTIME_HEADERS = {p.name for p in (ROOT / "runtime/include/ingot").glob("*.h")}

# folder -> what it must not include: runtime headers (public or private)
# for everything below the runtime, and anything of ours but format's
# own headers for format.
LOWER = ["dialects", "passes", "codegen", "compiler", "tools/ingot-opt",
         "tools/ingot-pack-tokenizer"]


def includes(path):
    return INCLUDE.findall(path.read_text(errors="replace"))


def problems():
    for src in sorted(ROOT.glob("format/**/*")):
        if src.suffix not in (".cpp", ".h"):
            continue
        for inc in includes(src):
            local = (src.parent / inc).exists()
            ours = inc.startswith("ingot/") and inc[6:] in FORMAT_HEADERS
            generated = inc.endswith("_generated.h")  # flatc, format/schema
            if not (local or ours or generated):
                yield f"{src.relative_to(ROOT)}: includes \"{inc}\"; " \
                      "format depends on nothing of ours"
    for folder in LOWER:
        for src in sorted((ROOT / folder).glob("**/*")):
            if src.suffix not in (".cpp", ".h"):
                continue
            for inc in includes(src):
                runtime = inc.startswith("runtime/") or (
                    inc.startswith("ingot/") and inc[6:] in RUNTIME_HEADERS)
                if runtime:
                    yield f"{src.relative_to(ROOT)}: includes \"{inc}\", " \
                          "a runtime header (use the format library)"
    for src in sorted((ROOT / "tools").glob("**/*")):
        if src.suffix in (".cpp", ".h"):
            for inc in includes(src):
                if inc.startswith("runtime/src") or inc.split("/")[0] in (
                        "cpu", "engine", "tokenizer", "exec", "artifact"):
                    yield f"{src.relative_to(ROOT)}: includes \"{inc}\", " \
                          "a private runtime header"
    for cmake in ["dialects/Ingot/CMakeLists.txt", "dialects/Plan/CMakeLists.txt",
                  "passes/CMakeLists.txt", "codegen/CMakeLists.txt",
                  "compiler/CMakeLists.txt",
                  "format/CMakeLists.txt"]:
        if not (ROOT / cmake).exists():
            yield f"{cmake}: missing"
            continue
        text = (ROOT / cmake).read_text()
        if "ingot_runtime" in text:
            yield f"{cmake}: links ingot_runtime"
        if "runtime/src" in text:
            yield f"{cmake}: reaches into runtime/src"


def main():
    found = list(problems())
    for p in found:
        print("layering:", p)
    if not FORMAT_HEADERS or not RUNTIME_HEADERS:
        print("layering: header folders not found under", ROOT)
        return 1
    print(f"layering: {len(FORMAT_HEADERS)} format and "
          f"{len(RUNTIME_HEADERS)} runtime headers; {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
