/* softhsa: bounds-checked AMDGPU code-object reading (see softhsa_elf.h for the contract). */
#include "softhsa_elf.h"

#include <string.h>

/* 1 when [offset, offset + count * entry_size) lies inside [0, size), overflow included. */
static int in_bounds(size_t size, uint64_t offset, uint64_t count, uint64_t entry_size) {
  if (entry_size && count > UINT64_MAX / entry_size) return 0;
  const uint64_t length = count * entry_size;
  return offset <= size && length <= size - offset;
}

int softhsa_elf_open(const uint8_t* data, size_t size, softhsa_elf_t* out_elf) {
  memset(out_elf, 0, sizeof(*out_elf));
  if (!data || size < sizeof(Elf64_Ehdr)) return -1;
  const Elf64_Ehdr* ehdr = (const Elf64_Ehdr*)data;
  if (memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64 ||
      ehdr->e_ident[EI_DATA] != ELFDATA2LSB || ehdr->e_machine != SOFTHSA_EM_AMDGPU ||
      ehdr->e_ident[EI_OSABI] != SOFTHSA_ELFOSABI_AMDGPU_HSA ||
      ehdr->e_ident[EI_ABIVERSION] < 2 || ehdr->e_ident[EI_ABIVERSION] > 4) {
    return -1;
  }
  if (ehdr->e_phnum && (ehdr->e_phentsize != sizeof(Elf64_Phdr) ||
                        !in_bounds(size, ehdr->e_phoff, ehdr->e_phnum, sizeof(Elf64_Phdr)))) {
    return -1;
  }
  if (ehdr->e_shnum && (ehdr->e_shentsize != sizeof(Elf64_Shdr) ||
                        !in_bounds(size, ehdr->e_shoff, ehdr->e_shnum, sizeof(Elf64_Shdr)))) {
    return -1;
  }
  /* Header tables must be 8-byte aligned in the image for the struct views to be valid. */
  if ((ehdr->e_phoff | ehdr->e_shoff) & 7 || ((uintptr_t)data & 7)) return -1;
  out_elf->data = data;
  out_elf->size = size;
  out_elf->ehdr = ehdr;
  out_elf->phdrs = ehdr->e_phnum ? (const Elf64_Phdr*)(data + ehdr->e_phoff) : NULL;
  out_elf->shdrs = ehdr->e_shnum ? (const Elf64_Shdr*)(data + ehdr->e_shoff) : NULL;
  return 0;
}

static uint64_t align4(uint64_t v) { return (v + 3) & ~(uint64_t)3; }

/* Scans one note area [offset, offset + size) for the AMDGPU metadata note. */
static int find_note(const softhsa_elf_t* elf, uint64_t offset, uint64_t size,
                     const uint8_t** out_desc, size_t* out_size) {
  if (!in_bounds(elf->size, offset, 1, size)) return -1;
  uint64_t pos = offset;
  const uint64_t end = offset + size;
  while (end - pos >= 12) {
    uint32_t header[3];
    memcpy(header, elf->data + pos, sizeof(header));
    const uint64_t namesz = header[0], descsz = header[1], type = header[2];
    const uint64_t name_pos = pos + 12;
    const uint64_t desc_pos = name_pos + align4(namesz);
    if (desc_pos > end || align4(descsz) > end - desc_pos) return -1;
    if (type == SOFTHSA_NT_AMDGPU_METADATA && namesz == 7 &&
        memcmp(elf->data + name_pos, "AMDGPU", 7) == 0) {
      *out_desc = elf->data + desc_pos;
      *out_size = descsz;
      return 0;
    }
    pos = desc_pos + align4(descsz);
  }
  return -1;
}

int softhsa_elf_metadata_note(const softhsa_elf_t* elf, const uint8_t** out_desc,
                              size_t* out_size) {
  for (uint16_t i = 0; i < elf->ehdr->e_phnum; ++i) {
    const Elf64_Phdr* ph = &elf->phdrs[i];
    if (ph->p_type == PT_NOTE &&
        find_note(elf, ph->p_offset, ph->p_filesz, out_desc, out_size) == 0) {
      return 0;
    }
  }
  for (uint16_t i = 0; i < elf->ehdr->e_shnum; ++i) {
    const Elf64_Shdr* sh = &elf->shdrs[i];
    if (sh->sh_type == SHT_NOTE &&
        find_note(elf, sh->sh_offset, sh->sh_size, out_desc, out_size) == 0) {
      return 0;
    }
  }
  return -1;
}

static const Elf64_Shdr* find_section(const softhsa_elf_t* elf, uint32_t type) {
  for (uint16_t i = 0; i < elf->ehdr->e_shnum; ++i)
    if (elf->shdrs[i].sh_type == type) return &elf->shdrs[i];
  return NULL;
}

int softhsa_elf_for_each_symbol(const softhsa_elf_t* elf, softhsa_elf_symbol_fn fn, void* user) {
  const Elf64_Shdr* symtab = find_section(elf, SHT_DYNSYM);
  if (!symtab) symtab = find_section(elf, SHT_SYMTAB);
  if (!symtab) return 0;
  if (symtab->sh_link >= elf->ehdr->e_shnum || symtab->sh_entsize != sizeof(Elf64_Sym) ||
      symtab->sh_offset & 7 || !in_bounds(elf->size, symtab->sh_offset, 1, symtab->sh_size)) {
    return -1;
  }
  const Elf64_Shdr* strtab = &elf->shdrs[symtab->sh_link];
  if (strtab->sh_type != SHT_STRTAB || !in_bounds(elf->size, strtab->sh_offset, 1, strtab->sh_size)) {
    return -1;
  }
  const char* strings = (const char*)elf->data + strtab->sh_offset;
  const Elf64_Sym* syms = (const Elf64_Sym*)(elf->data + symtab->sh_offset);
  const uint64_t count = symtab->sh_size / sizeof(Elf64_Sym);
  for (uint64_t i = 1; i < count; ++i) {
    const Elf64_Sym* sym = &syms[i];
    if (sym->st_shndx == SHN_UNDEF || sym->st_name == 0) continue;
    if (sym->st_name >= strtab->sh_size ||
        !memchr(strings + sym->st_name, '\0', strtab->sh_size - sym->st_name)) {
      return -1;
    }
    const softhsa_elf_symbol_t symbol = {sym->st_value, sym->st_size, ELF64_ST_TYPE(sym->st_info)};
    if (fn(strings + sym->st_name, &symbol, user)) break;
  }
  return 0;
}

int softhsa_elf_load_extent(const softhsa_elf_t* elf, uint64_t* out_min_vaddr,
                            uint64_t* out_max_vaddr, uint64_t* out_align) {
  uint64_t lo = UINT64_MAX, hi = 0, align = 1;
  for (uint16_t i = 0; i < elf->ehdr->e_phnum; ++i) {
    const Elf64_Phdr* ph = &elf->phdrs[i];
    if (ph->p_type != PT_LOAD) continue;
    if (ph->p_memsz > UINT64_MAX - ph->p_vaddr || ph->p_filesz > ph->p_memsz ||
        !in_bounds(elf->size, ph->p_offset, 1, ph->p_filesz)) {
      return -1;
    }
    if (ph->p_vaddr < lo) lo = ph->p_vaddr;
    if (ph->p_vaddr + ph->p_memsz > hi) hi = ph->p_vaddr + ph->p_memsz;
    if (ph->p_align > align) align = ph->p_align;
  }
  if (lo == UINT64_MAX || hi <= lo) return -1;
  *out_min_vaddr = lo;
  *out_max_vaddr = hi;
  *out_align = align;
  return 0;
}

/* Applies the R_AMDGPU_RELATIVE64 entries of every SHT_RELA section marked SHF_ALLOC. */
static int relocate(const softhsa_elf_t* elf, uint8_t* image, uint64_t min_vaddr,
                    uint64_t image_size, int64_t delta) {
  for (uint16_t i = 0; i < elf->ehdr->e_shnum; ++i) {
    const Elf64_Shdr* sh = &elf->shdrs[i];
    if (sh->sh_type != SHT_RELA || !(sh->sh_flags & SHF_ALLOC)) continue;
    if (sh->sh_entsize != sizeof(Elf64_Rela) || !in_bounds(elf->size, sh->sh_offset, 1, sh->sh_size)) {
      return -1;
    }
    for (uint64_t off = 0; off + sizeof(Elf64_Rela) <= sh->sh_size; off += sizeof(Elf64_Rela)) {
      Elf64_Rela rela;
      memcpy(&rela, elf->data + sh->sh_offset + off, sizeof(rela));
      if (ELF64_R_TYPE(rela.r_info) != SOFTHSA_R_AMDGPU_RELATIVE64) continue;
      if (rela.r_offset < min_vaddr || rela.r_offset - min_vaddr > image_size ||
          image_size - (rela.r_offset - min_vaddr) < 8) {
        return -1;
      }
      const uint64_t value = (uint64_t)delta + (uint64_t)rela.r_addend;
      memcpy(image + (rela.r_offset - min_vaddr), &value, sizeof(value));
    }
  }
  return 0;
}

int softhsa_elf_load(const softhsa_elf_t* elf, uint8_t* image, uint64_t min_vaddr,
                     uint64_t image_size, int64_t delta) {
  for (uint16_t i = 0; i < elf->ehdr->e_phnum; ++i) {
    const Elf64_Phdr* ph = &elf->phdrs[i];
    if (ph->p_type != PT_LOAD) continue;
    if (ph->p_vaddr < min_vaddr || ph->p_vaddr - min_vaddr > image_size ||
        ph->p_memsz > image_size - (ph->p_vaddr - min_vaddr) || ph->p_filesz > ph->p_memsz ||
        !in_bounds(elf->size, ph->p_offset, 1, ph->p_filesz)) {
      return -1;
    }
    memcpy(image + (ph->p_vaddr - min_vaddr), elf->data + ph->p_offset, ph->p_filesz);
  }
  return relocate(elf, image, min_vaddr, image_size, delta);
}
