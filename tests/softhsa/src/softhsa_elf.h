/* softhsa: bounds-checked reading of AMDGPU code objects (ELF64 shared objects).
 *
 * softhsa_elf_open() checks the header the way ROCr's loader does (ELF64, little-endian,
 * e_machine EM_AMDGPU 224, EI_OSABI ELFOSABI_AMDGPU_HSA 64, EI_ABIVERSION 2..4 = code object
 * v4..v6) and that every program header, section header, symbol table and note it will later
 * touch lies inside the image. After a successful open the other functions never read outside
 * [data, data + size); they return -1 / NULL on malformed input instead.
 * The view does not own `data`; it must outlive the view. */
#ifndef SOFTHSA_ELF_H
#define SOFTHSA_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* AMDGPU values from LLVM's include/llvm/BinaryFormat/ELF.h (not all in glibc's elf.h). */
#define SOFTHSA_EM_AMDGPU 224
#define SOFTHSA_ELFOSABI_AMDGPU_HSA 64
#define SOFTHSA_NT_AMDGPU_METADATA 32
#define SOFTHSA_R_AMDGPU_RELATIVE64 13
#define SOFTHSA_EF_AMDGPU_MACH 0xFFu
#define SOFTHSA_EF_AMDGPU_XNACK 0x300u
#define SOFTHSA_EF_AMDGPU_SRAMECC 0xC00u
#define SOFTHSA_EF_AMDGPU_FEATURE_ANY_XNACK 0x100u
#define SOFTHSA_EF_AMDGPU_FEATURE_OFF_XNACK 0x200u
#define SOFTHSA_EF_AMDGPU_FEATURE_ANY_SRAMECC 0x400u
#define SOFTHSA_EF_AMDGPU_FEATURE_OFF_SRAMECC 0x800u
#define SOFTHSA_EF_AMDGPU_GENERIC_VERSION_SHIFT 24

typedef struct softhsa_elf {
  const uint8_t* data;
  size_t size;
  const Elf64_Ehdr* ehdr;
  const Elf64_Phdr* phdrs; /* e_phnum entries, all inside the image */
  const Elf64_Shdr* shdrs; /* e_shnum entries, all inside the image (NULL when e_shnum is 0) */
} softhsa_elf_t;

/* One symbol found by name; `value` is the symbol's virtual address. */
typedef struct softhsa_elf_symbol {
  uint64_t value;
  uint64_t size;
  unsigned char type; /* STT_* */
} softhsa_elf_symbol_t;

/* Called for each defined symbol with a non-empty name; return nonzero to stop. */
typedef int (*softhsa_elf_symbol_fn)(const char* name, const softhsa_elf_symbol_t* symbol,
                                     void* user);

/* 0 when `data` is a loadable AMDGPU code object (header and tables in bounds), else -1. */
int softhsa_elf_open(const uint8_t* data, size_t size, softhsa_elf_t* out_elf);

/* The NT_AMDGPU_METADATA note's descriptor (msgpack), searched in PT_NOTE segments. */
int softhsa_elf_metadata_note(const softhsa_elf_t* elf, const uint8_t** out_desc,
                              size_t* out_size);

/* Visits the defined symbols of .dynsym (or .symtab when there is no .dynsym).
 * Returns -1 when a table or name is out of bounds, else 0. */
int softhsa_elf_for_each_symbol(const softhsa_elf_t* elf, softhsa_elf_symbol_fn fn, void* user);

/* Lowest p_vaddr and highest p_vaddr + p_memsz over the PT_LOAD segments, and their largest
 * alignment. Returns -1 when there is no PT_LOAD or the ranges overflow. */
int softhsa_elf_load_extent(const softhsa_elf_t* elf, uint64_t* out_min_vaddr,
                            uint64_t* out_max_vaddr, uint64_t* out_align);

/* Copies each PT_LOAD segment's file bytes to image + (p_vaddr - min_vaddr) and applies the
 * R_AMDGPU_RELATIVE64 dynamic relocations for `delta` (= load address - min_vaddr).
 * `image` must be (max_vaddr - min_vaddr) bytes and zeroed. Returns -1 on malformed input. */
int softhsa_elf_load(const softhsa_elf_t* elf, uint8_t* image, uint64_t min_vaddr,
                     uint64_t image_size, int64_t delta);

#endif /* SOFTHSA_ELF_H */
