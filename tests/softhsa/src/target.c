/* softhsa: code-object target vs agent ISA (see softhsa_target.h). */
#include "softhsa_target.h"

#include <string.h>

typedef struct mach_name {
  uint8_t mach;
  const char* name;
} mach_name_t;

/* EF_AMDGPU_MACH_AMDGCN_* (LLVM include/llvm/BinaryFormat/ELF.h). */
static const mach_name_t kMachNames[] = {
    {0x2c, "gfx900"},  {0x2d, "gfx902"},  {0x2e, "gfx904"},  {0x2f, "gfx906"},
    {0x30, "gfx908"},  {0x31, "gfx909"},  {0x32, "gfx90c"},  {0x33, "gfx1010"},
    {0x34, "gfx1011"}, {0x35, "gfx1012"}, {0x36, "gfx1030"}, {0x37, "gfx1031"},
    {0x38, "gfx1032"}, {0x39, "gfx1033"}, {0x3d, "gfx1035"}, {0x3e, "gfx1034"},
    {0x3f, "gfx90a"},  {0x40, "gfx940"},  {0x41, "gfx1100"}, {0x42, "gfx1013"},
    {0x43, "gfx1150"}, {0x44, "gfx1103"}, {0x45, "gfx1036"}, {0x46, "gfx1101"},
    {0x47, "gfx1102"}, {0x48, "gfx1200"}, {0x4a, "gfx1151"}, {0x4b, "gfx941"},
    {0x4c, "gfx942"},  {0x4e, "gfx1201"}, {0x4f, "gfx950"},  {0x51, "gfx9-generic"},
    {0x52, "gfx10-1-generic"}, {0x53, "gfx10-3-generic"}, {0x54, "gfx11-generic"},
    {0x55, "gfx1152"}, {0x58, "gfx1153"}, {0x59, "gfx12-generic"}, {0x5f, "gfx9-4-generic"},
};

/* Processor -> the generic code-object target that covers it (reference §7). */
static const struct { const char* processor; const char* generic; } kGenericOf[] = {
    {"gfx900", "gfx9-generic"},     {"gfx902", "gfx9-generic"},     {"gfx904", "gfx9-generic"},
    {"gfx906", "gfx9-generic"},     {"gfx909", "gfx9-generic"},     {"gfx90c", "gfx9-generic"},
    {"gfx940", "gfx9-4-generic"},   {"gfx941", "gfx9-4-generic"},   {"gfx942", "gfx9-4-generic"},
    {"gfx950", "gfx9-4-generic"},   {"gfx1010", "gfx10-1-generic"}, {"gfx1011", "gfx10-1-generic"},
    {"gfx1012", "gfx10-1-generic"}, {"gfx1013", "gfx10-1-generic"}, {"gfx1030", "gfx10-3-generic"},
    {"gfx1031", "gfx10-3-generic"}, {"gfx1032", "gfx10-3-generic"}, {"gfx1033", "gfx10-3-generic"},
    {"gfx1034", "gfx10-3-generic"}, {"gfx1035", "gfx10-3-generic"}, {"gfx1036", "gfx10-3-generic"},
    {"gfx1100", "gfx11-generic"},   {"gfx1101", "gfx11-generic"},   {"gfx1102", "gfx11-generic"},
    {"gfx1103", "gfx11-generic"},   {"gfx1150", "gfx11-generic"},   {"gfx1151", "gfx11-generic"},
    {"gfx1152", "gfx11-generic"},   {"gfx1153", "gfx11-generic"},   {"gfx1200", "gfx12-generic"},
    {"gfx1201", "gfx12-generic"},
};

static const char* mach_name(uint32_t mach) {
  for (size_t i = 0; i < sizeof(kMachNames) / sizeof(kMachNames[0]); ++i)
    if (kMachNames[i].mach == mach) return kMachNames[i].name;
  return NULL;
}

static const char* generic_of(const char* processor, size_t length) {
  for (size_t i = 0; i < sizeof(kGenericOf) / sizeof(kGenericOf[0]); ++i)
    if (strlen(kGenericOf[i].processor) == length &&
        memcmp(kGenericOf[i].processor, processor, length) == 0) {
      return kGenericOf[i].generic;
    }
  return NULL;
}

/* '+', '-' or 0 (not stated) for `feature` ("xnack", "sramecc") in an ISA name's feature list. */
static char isa_feature(const char* features, const char* feature) {
  const size_t n = strlen(feature);
  for (const char* p = strchr(features, ':'); p; p = strchr(p + 1, ':'))
    if (strncmp(p + 1, feature, n) == 0 && (p[1 + n] == '+' || p[1 + n] == '-')) return p[1 + n];
  return 0;
}

/* 1 when a code-object feature setting (ANY/UNSUPPORTED, OFF, ON within `mask`) suits the agent. */
static int feature_matches(uint32_t flags, uint32_t mask, uint32_t any, uint32_t off, char agent) {
  const uint32_t setting = flags & mask;
  if (setting == 0 || setting == any) return 1;
  return agent == (setting == off ? '-' : '+');
}

hsa_status_t softhsa_target_check(const softhsa_elf_t* elf, const softhsa_agent_t* agent) {
  const uint32_t flags = elf->ehdr->e_flags;
  const char* target = mach_name(flags & SOFTHSA_EF_AMDGPU_MACH);
  if (!target) return HSA_STATUS_ERROR_INVALID_ISA_NAME;
  const char* isa = softhsa_agent_is_gpu(agent) ? softhsa_agent_isa_name(agent) : NULL;
  const char* processor = isa ? strstr(isa, "--") : NULL;
  if (!processor) return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  processor += 2;
  const size_t processor_length = strcspn(processor, ":");
  const uint32_t generic_version = flags >> SOFTHSA_EF_AMDGPU_GENERIC_VERSION_SHIFT;
  if (strstr(target, "-generic")) {
    if (generic_version < 1 || elf->ehdr->e_ident[EI_ABIVERSION] < 4) {
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    const char* generic = generic_of(processor, processor_length);
    if (!generic || strcmp(generic, target) != 0) return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  } else if (strlen(target) != processor_length || memcmp(target, processor, processor_length)) {
    return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  }
  const char* features = processor + processor_length;
  if (!feature_matches(flags, SOFTHSA_EF_AMDGPU_XNACK, SOFTHSA_EF_AMDGPU_FEATURE_ANY_XNACK,
                       SOFTHSA_EF_AMDGPU_FEATURE_OFF_XNACK, isa_feature(features, "xnack")) ||
      !feature_matches(flags, SOFTHSA_EF_AMDGPU_SRAMECC, SOFTHSA_EF_AMDGPU_FEATURE_ANY_SRAMECC,
                       SOFTHSA_EF_AMDGPU_FEATURE_OFF_SRAMECC, isa_feature(features, "sramecc"))) {
    return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  }
  return HSA_STATUS_SUCCESS;
}
