// The portable kernel level: plain C++ that any CPU runs, and the reference the
// vectorized levels are tested against. Compiled with the project's default flags.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"

#if defined(__aarch64__)
#include <arm_neon.h>  // kernels_impl.h's bitwise_count
#endif

namespace torchops {
namespace default_isa {

#include "kernels/kernels_impl.h"

constinit const KernelTable kernel_table = portable_table();

}  // namespace default_isa
}  // namespace torchops
