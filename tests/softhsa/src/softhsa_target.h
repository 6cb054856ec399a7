/* softhsa: may a code object run on an agent? (hsa_executable_load_agent_code_object)
 *
 * The code object's processor comes from e_flags (LLVM's EF_AMDGPU_MACH_* values). It must equal the
 * agent's processor, or be the generic target covering it (reference §7 / IREE
 * util/target_id_map.inl) with generic version >= 1 and code object v6; explicit xnack/sramecc
 * settings must equal the agent's ("any" matches both). A mismatch is
 * HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS and an unknown processor HSA_STATUS_ERROR_INVALID_ISA_NAME,
 * as in ROCr's ExecutableImpl::LoadCodeObject. */
#ifndef SOFTHSA_TARGET_H
#define SOFTHSA_TARGET_H

#include <hsa/hsa.h>

#include "softhsa_core.h"
#include "softhsa_elf.h"

hsa_status_t softhsa_target_check(const softhsa_elf_t* elf, const softhsa_agent_t* agent);

#endif /* SOFTHSA_TARGET_H */
