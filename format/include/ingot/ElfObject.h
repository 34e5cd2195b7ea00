//===- ElfObject.h - Bounds-checked reader for GPU code objects -*- C++ -*-===//
//
// CUDA cubins and AMDGPU code objects are ELF64 little-endian files. Tests,
// `ingot inspect` and the loader need three things from them: the machine,
// the target architecture (encoded in e_flags) and the kernel symbols. This
// reader takes bytes from anywhere (an artifact, a file on disk, a fuzzer):
// every offset and size is checked against the buffer before it is read,
// and anything it cannot vouch for is refused with a Status naming it.
// It reads the section table and .symtab only; program headers, relocations
// and notes are left to whoever needs them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ingot/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ingot {

// e_machine values.
constexpr uint16_t kEmCuda = 190;
constexpr uint16_t kEmAmdgpu = 224;

// Section types (sh_type) the reader treats specially.
constexpr uint32_t kShtNull = 0;
constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtStrtab = 3;
constexpr uint32_t kShtNobits = 8; // occupies no bytes in the file (.bss)

// Symbol types (low nibble of st_info) and bindings (high nibble).
constexpr uint8_t kSttNotype = 0;
constexpr uint8_t kSttObject = 1;
constexpr uint8_t kSttFunc = 2;
constexpr uint8_t kSttSection = 3;
constexpr uint8_t kStbLocal = 0;
constexpr uint8_t kStbGlobal = 1;
constexpr uint8_t kStbWeak = 2;

// Section indices at and above this are reserved (SHN_ABS, SHN_COMMON, ...)
// and name no entry of the section table.
constexpr uint16_t kShnLoReserve = 0xff00;

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  /// Where the section's bytes lie in the buffer; for every type but
  /// SHT_NOBITS and SHT_NULL, offset + size is checked to be inside it.
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct ElfSymbol {
  std::string name;
  uint8_t type = 0;    // kStt*
  uint8_t binding = 0; // kStb*
  uint8_t other = 0;   // st_other: visibility and machine-specific bits
  /// st_shndx: 0 for undefined, a valid index into ElfObject::sections
  /// below kShnLoReserve (checked), a reserved index otherwise.
  uint16_t sectionIndex = 0;
  uint64_t value = 0;
  uint64_t size = 0;
};

struct ElfObject {
  uint16_t machine = 0; // e_machine: kEmCuda, kEmAmdgpu, ...
  uint32_t flags = 0;   // e_flags: the target architecture on GPUs
  uint8_t osabi = 0;    // e_ident[EI_OSABI]
  uint8_t abiVersion = 0;
  uint16_t type = 0; // e_type: ET_REL, ET_EXEC, ET_DYN
  std::vector<ElfSection> sections;
  /// The entries of the SHT_SYMTAB section (index 0, the null symbol,
  /// included so that indices match the file's); empty without one.
  std::vector<ElfSymbol> symbols;
};

/// Parses a 64-bit little-endian ELF file held in [data, data + size).
/// On failure `out` is left unspecified and the Status says what was wrong.
Status parseElfObject(const uint8_t *data, size_t size, ElfObject *out);

/// "sm_80" from a cubin's ELF ABI version and e_flags, or "" when the flags
/// carry no SM number. Cubins of ELF ABI version 8 and above (CUDA 13's
/// nvJitLink: sm_80 -> 0x6005004, sm_90 -> 0x6005a04) keep the SM number in
/// bits 8-15; older ones (version 7 and below) in bits 0-7 (sm_80 -> 0x50).
std::string cudaArchFromFlags(uint8_t abiVersion, uint32_t flags);

/// "gfx90a" from an AMDGPU code object's e_flags (EF_AMDGPU_MACH, the low
/// byte), or "" for a value not in the table. Feature bits (xnack, sramecc)
/// above the low byte are ignored.
std::string amdgpuArchFromFlags(uint32_t flags);

/// The names of the defined global functions, in symbol-table order: the
/// kernels of a cubin or an AMDGPU code object.
std::vector<std::string> functionSymbols(const ElfObject &object);

/// Whether any symbol of .symtab is named `name`.
bool hasSymbol(const ElfObject &object, std::string_view name);

} // namespace ingot
