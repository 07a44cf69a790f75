// Which kernel level runs. Chosen once, on first use, from what this CPU (and its OS)
// supports, or forced with TORCHOPS_CPU_CAPABILITY=default|avx2|avx512; tests switch it
// in-process with set_cpu_capability.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace torchops {

// The function table of the kernel level in use.
const KernelTable& active_kernels();

// The name of the level in use: "default", "avx2" or "avx512".
std::string cpu_capability();

// The levels this CPU can run, lowest first ("default" always).
std::vector<std::string> supported_cpu_capabilities();

// Switches to the named level; refuses a name that is not a level, or a level this CPU
// cannot run, with a ValueError naming the value and the supported levels.
void set_cpu_capability(const std::string& name);

}  // namespace torchops
