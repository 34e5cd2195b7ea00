"""Writes the Unicode data ingot's tokenizer needs as compact sorted tables
(declared in runtime/src/tokenizer/UnicodeTables.h), one file per use, in
runtime/src/tokenizer/:

  * UnicodeClassTables.cpp: \\p{L} (general category L*), \\p{N} (N*) and
    \\s (White_Space: U+0009-000D, U+0085 and categories Zs, Zl, Zp) as code
    point ranges, for the pre-tokenizer split patterns, and what the Digits
    pre-tokenizer takes for a digit (Rust's char::is_numeric: N* of the
    Unicode version of the Rust that built `tokenizers`, 17.0 for 0.23.3),
    found by asking the installed `tokenizers` about each character;
  * UnicodeCompositionTables.cpp: canonical combining classes and primary
    composites, for NFC's reordering and composition (Qwen2's normalizer);
  * UnicodeDecompositionTables.cpp: canonical decompositions into two code
    points, and UnicodeSingletonTables.cpp: those into one (mostly CJK
    compatibility ideographs), for NFC's decomposition; each a sorted,
    binary-searched array.

The tables must agree with the Hugging Face `tokenizers` package, not with
any particular Unicode release: it matches the classes with Oniguruma
(Unicode 16.0 in tokenizers 0.23) and normalises with a fork of the
`unicode-normalization` crate whose data is several versions older. So the
classes and the base NFC data come from the `unicodedata2` backport pinned to
Oniguruma's version (Python 3.11's own unicodedata is Unicode 14), and then
every character the installed `tokenizers` does not normalise as that data
says (because its NFC predates the character) is dropped from the NFC
tables. test/e2e/test_tokenizer.py checks all of it against `tokenizers`.

  .venv/bin/pip install unicodedata2==16.0.0   # tokenizers==0.23.3 too
  .venv/bin/python scripts/gen_unicode_tables.py

The output is deterministic; commit it.
"""
import sys
from pathlib import Path

try:
    import unicodedata2 as ud
except ImportError:  # still works, but may disagree with `tokenizers`
    import unicodedata as ud
    print(f"warning: unicodedata2 not installed; using Python's Unicode "
          f"{ud.unidata_version}", file=sys.stderr)

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "runtime" / "src" / "tokenizer"
MAX_CP = 0x110000


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


def ranges(pred):
    """[lo, hi] runs of code points satisfying pred."""
    out, start = [], None
    for cp in range(MAX_CP + 1):
        hit = cp < MAX_CP and not is_surrogate(cp) and pred(cp)
        if hit and start is None:
            start = cp
        elif not hit and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def category(cp):
    return ud.category(chr(cp))


def is_white_space(cp):
    return 0x09 <= cp <= 0x0D or cp == 0x85 or category(cp) in ("Zs", "Zl",
                                                                 "Zp")


def canonical_decomposition(cp):
    """One level of cp's canonical mapping as a tuple, or None."""
    d = ud.decomposition(chr(cp))
    if not d or d.startswith("<"):  # none, or a compatibility mapping
        return None
    return tuple(int(x, 16) for x in d.split())


def ccc_ranges(unknown):
    out = []
    for cp in range(MAX_CP):
        c = 0 if is_surrogate(cp) or cp in unknown else ud.combining(chr(cp))
        if not c:
            continue
        if out and out[-1][1] == cp - 1 and out[-1][2] == c:
            out[-1] = (out[-1][0], cp, c)
        else:
            out.append((cp, cp, c))
    return out


def digits_numeric(cp):
    """Whether the Digits pre-tokenizer of `tokenizers` isolates cp."""
    from tokenizers import pre_tokenizers
    digits = getattr(digits_numeric, "splitter", None)
    if digits is None:
        digits = digits_numeric.splitter = pre_tokenizers.Digits(
            individual_digits=True)
    return len(digits.pre_tokenize_str("a" + chr(cp) + "a")) == 3


def nfc_unknown_to_tokenizers():
    """Code points whose NFC data `tokenizers` lacks: probing its NFC
    normalizer on each character that has any (a combining class, a
    decomposition, a composition)."""
    from tokenizers import normalizers
    hf = normalizers.NFC().normalize_str
    unknown = set()
    for cp in range(MAX_CP):
        if is_surrogate(cp):
            continue
        c = chr(cp)
        probes = []
        if ud.combining(c):  # reorders before U+0334 (class 1) if known
            probes.append(c + "\u0334")
        if canonical_decomposition(cp):
            probes += [c, ud.normalize("NFD", c)]
        if any(hf(p) != ud.normalize("NFC", p) for p in probes):
            unknown.add(cp)
    return unknown


def main():
    unknown = nfc_unknown_to_tokenizers()
    decomps, composites = [], []
    for cp in range(MAX_CP):
        if is_surrogate(cp) or 0xAC00 <= cp <= 0xD7A3 or cp in unknown:
            continue  # Hangul syllables are handled algorithmically
        d = canonical_decomposition(cp)
        if d is None:
            continue
        assert len(d) in (1, 2), hex(cp)
        decomps.append((cp, d[0], d[1] if len(d) == 2 else 0))
        # A primary composite: a pair mapping whose character survives NFC
        # (i.e. is not in Full_Composition_Exclusion).
        if (len(d) == 2 and ud.combining(chr(d[0])) == 0
                and ud.normalize("NFC", chr(cp)) == chr(cp)):
            composites.append((d[0], d[1], cp))
    composites.sort()

    hexr = lambda r: "{0x%X, 0x%X}" % r
    triple = lambda r: "{0x%X, 0x%X, 0x%X}" % r
    files = {
        "UnicodeClassTables.cpp": (
            "Pre-tokenizer character classes",
            [f'const char *const kUnicodeVersion = "{ud.unidata_version}";',
             "",
             table("CodeRange kLetterRanges", "kLetterRangeCount",
                   ranges(lambda c: category(c).startswith("L")), hexr, 6),
             table("CodeRange kNumberRanges", "kNumberRangeCount",
                   ranges(lambda c: category(c).startswith("N")), hexr, 6),
             table("CodeRange kWhiteSpaceRanges", "kWhiteSpaceRangeCount",
                   ranges(is_white_space), hexr, 6),
             table("CodeRange kDigitsNumericRanges",
                   "kDigitsNumericRangeCount", ranges(digits_numeric), hexr,
                   6)]),
        "UnicodeCompositionTables.cpp": (
            "NFC composition data",
            [table("CccRange kCccRanges", "kCccRangeCount",
                   ccc_ranges(unknown), lambda r: "{0x%X, 0x%X, %d}" % r, 5),
             table("Composition kCompositions", "kCompositionCount",
                   composites, triple, 4)]),
        "UnicodeDecompositionTables.cpp": (
            "NFC decompositions into two",
            [table("Decomposition kDecompositions", "kDecompositionCount",
                   [d for d in decomps if d[2]], triple, 4)]),
        "UnicodeSingletonTables.cpp": (
            "NFC decompositions into one",
            [table("Singleton kSingletons", "kSingletonCount",
                   [d[:2] for d in decomps if not d[2]],
                   lambda r: "{0x%X, 0x%X}" % r, 6)]),
    }
    for name, (summary, tables) in files.items():
        text = source_file(name, summary, len(unknown), tables)
        (OUT_DIR / name).write_text(text)
        print(f"wrote {(OUT_DIR / name).relative_to(ROOT)} "
              f"({text.count(chr(10))} lines)")
    print(f"Unicode {ud.unidata_version}: {len(decomps)} decompositions, "
          f"{len(composites)} compositions, NFC data of {len(unknown)} code "
          f"points left out")


def table(declaration, count_name, rows, fmt, per_line):
    """A C++ array definition, per_line rows a line, and its element count."""
    array = declaration.split()[-1]
    lines = [f"const {declaration}[] = {{"]
    for i in range(0, len(rows), per_line):
        lines.append("    " + ", ".join(fmt(r) for r in
                                       rows[i:i + per_line]) + ",")
    lines += ["};", f"const size_t {count_name} = std::size({array});", ""]
    return "\n".join(lines)


def source_file(name, summary, unknown_count, tables):
    """One generated .cpp file: LLVM-style banner, the tables, namespace."""
    banner = f"//===- {name} - {summary} "
    banner += "-" * max(3, 75 - len(banner)) + "===//"
    parts = [
        banner,
        "//",
        "// GENERATED by scripts/gen_unicode_tables.py from Unicode "
        f"{ud.unidata_version}, less the NFC",
        f"// data of {unknown_count} characters that tokenizers' NFC does "
        "not know; do not edit.",
        "// Regenerate: .venv/bin/python scripts/gen_unicode_tables.py",
        "//",
        "//===" + "-" * 70 + "===//",
        '#include "UnicodeTables.h"',
        "",
        "namespace ingot::tok::tables {",
        "",
        *tables,
        "} // namespace ingot::tok::tables",
        "",
    ]
    return "\n".join(parts)


if __name__ == "__main__":
    main()
