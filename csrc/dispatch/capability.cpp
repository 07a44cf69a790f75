#include "dispatch/capability.h"

namespace torchops {

const KernelTable& active_kernels() {
  return default_isa::kernel_table;
}

}  // namespace torchops
