//===- ElfObjectTest.cpp - Cubins and hostile ELF bytes -------------------===//
//
// The reader on real cubins (test/fixtures/cubin), the CUDA flag table, and
// every kind of damaged input; the AMDGPU side is in ElfAmdgpuTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "ElfTestUtil.h"

using namespace ingot;
using namespace ingot::elftest;

namespace {

TEST(ElfObjectTest, CubinSm80) {
  expectCubinWithAdd(readFixture("k_sm80.cubin"), "sm_80");
}

TEST(ElfObjectTest, CubinSm90) {
  expectCubinWithAdd(readFixture("k_sm90.cubin"), "sm_90");
}

TEST(ElfObjectTest, CudaArchFromFlags) {
  // Measured on CUDA 13 nvJitLink cubins (ELF ABI version 8).
  EXPECT_EQ(cudaArchFromFlags(8, 0x6005004), "sm_80");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6005a04), "sm_90");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6006402), "sm_100");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6007802), "sm_120");
  // Older cubins keep the SM number in the low byte.
  EXPECT_EQ(cudaArchFromFlags(7, 0x500550), "sm_80");
  EXPECT_EQ(cudaArchFromFlags(7, 0x5a), "sm_90");
  EXPECT_EQ(cudaArchFromFlags(8, 0x6000004), "");
  EXPECT_EQ(cudaArchFromFlags(7, 0), "");
}

// --- Hostile inputs ---------------------------------------------------------

// Each prefix is its own allocation of exactly that size, so the ASan build
// reports any read past it. The cubin's program headers follow the section
// table and are not read: prefixes holding all sections parse.
TEST(ElfObjectTest, EveryTruncationOfACubin) {
  const Bytes whole = readFixture("k_sm80.cubin");
  ElfObject full;
  ASSERT_TRUE(parse(whole, &full).isOk());
  uint64_t needed = load(whole, kEShoff, 8) + 64 * load(whole, kEShnum, 2);
  for (const ElfSection &s : full.sections)
    if (s.type != kShtNobits)
      needed = std::max(needed, s.offset + s.size);
  ASSERT_LT(needed, whole.size());
  for (size_t len = 0; len < whole.size(); ++len) {
    const Bytes prefix(whole.begin(), whole.begin() + len);
    ElfObject obj;
    const Status st = parse(prefix, &obj);
    ASSERT_EQ(st.isOk(), len >= needed)
        << "prefix " << len << ": " << st.message();
    if (st.isOk())
      EXPECT_EQ(functionSymbols(obj), functionSymbols(full));
    else
      EXPECT_FALSE(st.message().empty());
  }
}

// Any single byte of the header or section table set to 0xff or 0: the
// parse refuses or yields an object whose ranges can be trusted.
TEST(ElfObjectTest, EverySmashedHeaderByte) {
  const Bytes whole = readFixture("k_sm80.cubin");
  const size_t shoff = sectionHeaderAt(whole, 0);
  const size_t shend = sectionHeaderAt(whole, load(whole, kEShnum, 2));
  for (size_t at = 0; at < shend; at = at == 63 ? shoff : at + 1) {
    for (uint8_t value : {uint8_t(0), uint8_t(0xff)}) {
      const Bytes b = patched(whole, at, value, 1);
      ElfObject obj;
      if (parse(b, &obj).isOk())
        expectUsable(obj, b.size());
    }
  }
}

TEST(ElfObjectTest, RefusesWhatIsNotElf64LittleEndian) {
  const Bytes cubin = readFixture("k_sm80.cubin");
  expectRefused(Bytes{}, "not an ELF file (bad magic)");
  expectRefused(Bytes{0x7f, 'E', 'L'}, "not an ELF file (bad magic)");
  expectRefused(patched(cubin, 0, 'M', 1), "not an ELF file (bad magic)");
  expectRefused(patched(cubin, 4, 1, 1),
                "ELF class 1 (32-bit) is not supported");
  expectRefused(patched(cubin, 4, 7, 1), "ELF class 7");
  expectRefused(patched(cubin, 5, 2, 1), "big-endian");
  expectRefused(patched(cubin, 6, 0, 1), "identification version 0");
  expectRefused(Bytes(cubin.begin(), cubin.begin() + 63),
                "truncated ELF header: 63 bytes");
}

TEST(ElfObjectTest, RefusesABadSectionTable) {
  const Bytes c = readFixture("k_sm80.cubin");
  const uint64_t kMax = std::numeric_limits<uint64_t>::max();
  expectRefused(patched(c, kEShentsize, 56, 2),
                "e_shentsize is 56, expected 64");
  expectRefused(patched(c, kEShnum, 0xffff, 2),
                "65535 entries of 64 bytes) lies outside the file");
  expectRefused(patched(c, kEShoff, kMax - 100, 8),
                "section table (offset 18446744073709551515");
  expectRefused(patched(c, kEShoff, c.size() - 64, 8), "lies outside the file");
  expectRefused(patched(c, kEShnum, 0, 2), "extended section numbering");
  expectRefused(patched(c, kEShstrndx, 200, 2),
                "string table index 200 is out of range (14 sections)");
  expectRefused(patched(c, kEShstrndx, 0xffff, 2), "e_shstrndx 0xffff");
  expectRefused(patched(c, kEShstrndx, 3, 2), // .symtab
                "section 3 is not a string table");
}

TEST(ElfObjectTest, RefusesSectionsOutsideTheFile) {
  const Bytes c = readFixture("k_sm80.cubin");
  expectRefused(patched(c, sectionHeaderAt(c, 13) + kShOffset, c.size() + 1, 8),
                "ELF section 13: its bytes (offset 4137");
  expectRefused(patched(c, sectionHeaderAt(c, 13) + kShSize, c.size(), 8),
                "ELF section 13: its bytes");
  // offset + size wraps to a small number: must still be refused.
  Bytes b = patched(c, sectionHeaderAt(c, 4) + kShOffset, 16, 8);
  store(b, sectionHeaderAt(b, 4) + kShSize,
        std::numeric_limits<uint64_t>::max() - 8, 8);
  expectRefused(b, "ELF section 4: its bytes");
  // The symbol table running past the end of the file.
  expectRefused(patched(c, sectionHeaderAt(c, 3) + kShSize, 24 * 1000, 8),
                "ELF section 3: its bytes");
}

TEST(ElfObjectTest, RefusesBadNames) {
  const Bytes c = readFixture("k_sm80.cubin");
  ElfObject full;
  ASSERT_TRUE(parse(c, &full).isOk());
  const size_t addAt = size_t(full.sections[3].offset) + 8 * 24;
  ASSERT_EQ(full.symbols[8].name, "add");
  expectRefused(patched(c, addAt + kStName, 0x10000, 4),
                "ELF symbol 8: name offset 65536 is beyond its string "
                "table (section 2, 255 bytes)");
  expectRefused(patched(c, sectionHeaderAt(c, 5) + kShName, 0xfffffff0, 4),
                "ELF section 5: name offset 4294967280 is beyond");
  // Every byte from `add`'s name to the end of .strtab made non-NUL.
  Bytes b = c;
  const ElfSection &strtab = full.sections[2];
  const size_t nameAt = strtab.offset + load(c, addAt + kStName, 4);
  std::fill(b.begin() + nameAt, b.begin() + strtab.offset + strtab.size, 'x');
  expectRefused(b, "ELF symbol 8: name at offset");
  expectRefused(b, "is not NUL-terminated inside its string table");
  // .shstrtab cut short, so that the last section name loses its NUL.
  expectRefused(
      patched(c, sectionHeaderAt(c, 1) + kShSize, full.sections[1].size - 1, 8),
      "not NUL-terminated");
}

TEST(ElfObjectTest, RefusesABadSymbolTable) {
  const Bytes c = readFixture("k_sm80.cubin");
  const size_t symtab = sectionHeaderAt(c, 3);
  expectRefused(patched(c, symtab + kShEntsize, 16, 8),
                "symbol table (section 3): entry size 16, expected 24");
  expectRefused(patched(c, symtab + kShSize, 24 * 9 - 1, 8),
                "size 215 is not a multiple of 24");
  expectRefused(patched(c, symtab + kShLink, 99, 4),
                "string table index 99 is out of range");
  expectRefused(patched(c, symtab + kShLink, 4, 4), // .debug_frame
                "section 4 is not a string table");
  expectRefused(patched(c, sectionHeaderAt(c, 4) + kShType, kShtSymtab, 4),
                "more than one symbol table (sections 3 and 4)");

  ElfObject full;
  ASSERT_TRUE(parse(c, &full).isOk());
  const size_t addShndx = full.sections[3].offset + 8 * 24 + kStShndx;
  expectRefused(patched(c, addShndx, 200, 2),
                "ELF symbol 8 ('add'): section index 200 is out of range");
  // Reserved indices (SHN_ABS) name no section and are kept as they are.
  ElfObject obj;
  ASSERT_TRUE(parse(patched(c, addShndx, 0xfff1, 2), &obj).isOk());
  EXPECT_EQ(obj.symbols[8].sectionIndex, 0xfff1);
}

TEST(ElfObjectTest, AcceptsAnObjectWithoutSections) {
  Bytes b = buildAmdgpuObject(0x4c, {});
  store(b, kEShoff, 0, 8);
  store(b, kEShnum, 0, 2);
  store(b, kEShstrndx, 0, 2);
  ElfObject obj;
  ASSERT_TRUE(parse(b, &obj).isOk());
  EXPECT_TRUE(obj.sections.empty());
  EXPECT_TRUE(obj.symbols.empty());
  EXPECT_TRUE(functionSymbols(obj).empty());
}

// One long name shared by thousands of symbols: the copies would be 8 MB
// from a 60 KB file. Refused; a few symbols sharing a name are fine.
TEST(ElfObjectTest, RefusesAmplifiedNames) {
  const std::string longName(4000, 'k');
  std::vector<SymbolSpec> syms(2000,
                               {longName, kSttFunc, kStbGlobal, kSynText, 4});
  expectRefused(buildAmdgpuObject(0x4c, syms), "names total more than 16 "
                                               "times the file's size");
  syms.resize(20);
  ElfObject obj;
  ASSERT_TRUE(parse(buildAmdgpuObject(0x4c, syms), &obj).isOk());
  EXPECT_EQ(functionSymbols(obj).size(), 20u);
}

} // namespace
