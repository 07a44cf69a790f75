// Which kernel level runs: chosen once, on first use, from what this CPU supports.
#pragma once

#include "kernels/kernels.h"

namespace torchops {

// The function table of the kernel level in use.
const KernelTable& active_kernels();

}  // namespace torchops
