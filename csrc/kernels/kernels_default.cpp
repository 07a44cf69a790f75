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

// On x86-64 this level's `shift` is a scalar loop (SSE2 has no shift by a count per lane):
// every strided operand is read in place (kernels.h). On aarch64 the compiler vectorizes it
// with NEON, and the contiguous copies pay, as at the x86 vector levels.
bool strided_shift_in_place(int /*width*/, int64_t /*step*/) {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

constinit const KernelTable kernel_table = {&shift,         &shift_by_scalar,        &shift_by_row_count, &signbit,
                                            &shift_strided, &strided_shift_in_place, &bitwise_count};

}  // namespace default_isa
}  // namespace torchops
