// The portable kernel level: plain C++ that any CPU runs, and the reference the
// vectorized levels are tested against. Compiled with the project's default flags.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"

namespace torchops {
namespace default_isa {

#include "kernels/kernels_impl.h"

constinit const KernelTable kernel_table = {&shift, &shift_by_scalar, &shift_by_row_count, &signbit};

}  // namespace default_isa
}  // namespace torchops
