//===- ElfAmdgpuTest.cpp - The reader on AMDGPU code objects --------------===//
//
// No ROCm toolchain is at hand, so the objects are built by ElfTestUtil.h's
// builder: gfx90a and gfx942 flags, kernels and their `.kd` descriptors.
//
//===----------------------------------------------------------------------===//
#include "ElfTestUtil.h"

using namespace ingot;
using namespace ingot::elftest;

namespace {

TEST(ElfObjectTest, AmdgpuArchFromFlags) {
  EXPECT_EQ(amdgpuArchFromFlags(0x3f), "gfx90a");
  EXPECT_EQ(amdgpuArchFromFlags(0x4c), "gfx942");
  EXPECT_EQ(amdgpuArchFromFlags(0x41), "gfx1100");
  EXPECT_EQ(amdgpuArchFromFlags(0x36), "gfx1030");
  EXPECT_EQ(amdgpuArchFromFlags(0x30), "gfx908");
  // xnack (0x300) and sramecc (0xc00) feature bits do not change the chip.
  EXPECT_EQ(amdgpuArchFromFlags(0xf4c), "gfx942");
  EXPECT_EQ(amdgpuArchFromFlags(0), "");
  EXPECT_EQ(amdgpuArchFromFlags(0xff), "");
}

TEST(ElfObjectTest, AmdgpuGfx90aWithKernelDescriptor) {
  const Bytes b = buildAmdgpuObject(0x3f | 0x300, kernelSymbols());
  ElfObject obj;
  const Status st = parse(b, &obj);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(obj.machine, kEmAmdgpu);
  EXPECT_EQ(obj.osabi, 64);
  EXPECT_EQ(obj.abiVersion, 3);
  EXPECT_EQ(obj.type, 3);
  EXPECT_EQ(amdgpuArchFromFlags(obj.flags), "gfx90a");
  ASSERT_EQ(obj.sections.size(), kSynCount);
  EXPECT_EQ(obj.sections[kSynBss].name, ".bss");
  ASSERT_EQ(obj.symbols.size(), 6u); // with the null symbol
  EXPECT_EQ(obj.symbols[0].name, "");
  // Only the defined global function: not the local helper, not the import.
  EXPECT_EQ(functionSymbols(obj), std::vector<std::string>{"my_kernel"});
  const ElfSymbol *kd = findSymbol(obj, "my_kernel.kd");
  ASSERT_NE(kd, nullptr);
  EXPECT_EQ(kd->type, kSttObject);
  EXPECT_EQ(kd->binding, kStbGlobal);
  EXPECT_EQ(kd->size, 64u);
  EXPECT_EQ(obj.sections[kd->sectionIndex].name, ".rodata");
  EXPECT_FALSE(hasSymbol(obj, "my_kernel.k"));
  expectUsable(obj, b.size());
}

TEST(ElfObjectTest, AmdgpuGfx942) {
  ElfObject obj;
  ASSERT_TRUE(parse(buildAmdgpuObject(0x4c, kernelSymbols()), &obj).isOk());
  EXPECT_EQ(amdgpuArchFromFlags(obj.flags), "gfx942");
  EXPECT_TRUE(hasSymbol(obj, "my_kernel.kd"));
}

} // namespace
