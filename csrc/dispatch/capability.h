// Which kernel level runs. Each architecture has its own levels: "default" (the portable
// code) everywhere, and on x86-64 "avx2", "avx512" and "avx512_bitalg" (avx512 with the
// bit counts of AVX-512 BITALG and VPOPCNTDQ). Chosen once, on first use, from what
// this CPU (and its OS) supports, or forced with TORCHOPS_CPU_CAPABILITY=<level>; tests
// switch it in-process with set_cpu_capability.
//
// TORCHOPS_CPU_KERNELS=composite or =triton (read when the library loads) sends CPU tensors
// to the path other devices take instead (csrc/ops/composite.cpp; with triton, the Triton
// compute kernels that torchops/_triton.py registers, run by Triton's interpreter), so that
// those paths are tested on a machine without a GPU; the level is then that name.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace torchops {

// Which kernels CPU tensors take: the compiled levels (unset), or the other devices' path.
enum class CpuKernels { levels, composite, triton };
CpuKernels cpu_kernels();

// The function table of the kernel level in use.
const KernelTable& active_kernels();

// The name of the level in use.
std::string cpu_capability();

// The levels of the architecture this library is built for, lowest first ("default" first).
std::vector<std::string> cpu_capabilities();

// The levels this CPU can run, lowest first ("default" always).
std::vector<std::string> supported_cpu_capabilities();

// Switches to the named level; refuses a name that is not a level of this architecture, or
// a level this CPU cannot run, with a ValueError naming the value and the levels.
void set_cpu_capability(const std::string& name);

}  // namespace torchops
