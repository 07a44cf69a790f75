// torchops::bitwise_count's entries, CPU and device-generic, and its composite compute op: its
// kernels (its check of x is checks.h's check_integer_or_bool_input); the rest is
// csrc/ops/unary.h's. The rules: docs/semantics.md.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <ATen/ATen.h>

#include <cstdint>

#include "dispatch/capability.h"
#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/cpu.h"
#include "ops/unary.h"

namespace torchops {
namespace {

constexpr const char* kBitwiseCountOp = "torchops.bitwise_count";

// out[i] = the number of 1 bits of x[i] (of |x[i]| for a signed dtype), for the rows of
// contiguous elements of `dtype`.
void bitwise_count_rows(at::ScalarType dtype, const void* x, void* out, const Rows& rows) {
  uint8_t* counts = static_cast<uint8_t*>(out);
  if (dtype == at::kBool) {  // its value: 1 for true, whatever the byte that holds it
    const uint8_t* values = static_cast<const uint8_t*>(x);
    for (int64_t r = 0; r < rows.rows; ++r) {
      const uint8_t* row = values + r * rows.x_stride;
      uint8_t* row_counts = counts + r * rows.out_stride;
      for (int64_t i = 0; i < rows.n; ++i) row_counts[i] = row[i] != 0;
    }
    return;
  }
  active_kernels().bitwise_count(static_cast<int>(at::elementSize(dtype)), at::isSignedType(dtype), x, counts, rows);
}

constexpr UnaryOp kBitwiseCount{kBitwiseCountOp, at::kByte, &check_integer_or_bool_input, &bitwise_count_rows,
                                &op::bitwise_count_compute};

}  // namespace

namespace cpu {

at::Tensor bitwise_count(const at::Tensor& x) { return unary(kBitwiseCount, x); }
at::Tensor& bitwise_count_out(const at::Tensor& x, at::Tensor& out) { return unary_out(kBitwiseCount, x, out); }

}  // namespace cpu

namespace composite {

at::Tensor bitwise_count(const at::Tensor& x) { return unary(kBitwiseCount, x); }
at::Tensor& bitwise_count_out(const at::Tensor& x, at::Tensor& out) { return unary_out(kBitwiseCount, x, out); }

// On the bits of the signed dtype of x's width (CUDA's ATen has no arithmetic on uint16, 32
// and 64): a signed x's magnitude as (x ^ s) - s, s its sign fill, which wraps for the
// minimum to its own bits, 2^(width-1), as ATen's integer arithmetic does on every backend;
// then the count of those bits by halves (SWAR, as kernels_impl.h's count_ones), where each
// right shift is arithmetic and the mask after it clears the copies of the sign bit it
// brought in, which makes it the logical shift. The count is the low byte.
void bitwise_count_compute(at::Tensor& out, const at::Tensor& x) {
  const at::ScalarType dtype = x.scalar_type();
  if (dtype == at::kBool) return void(out.copy_(x));  // true: 1
  const at::ScalarType computed = signed_of_width(dtype);
  const int64_t bits = static_cast<int64_t>(at::elementSize(dtype)) * 8;
  at::Tensor v = x.view(computed);
  if (at::isSignedType(dtype)) {
    const at::Tensor sign_fill = at::bitwise_right_shift(v, bits - 1);
    v = at::bitwise_xor(v, sign_fill).sub_(sign_fill);
  }
  // 0x55.., 0x33.. and 0x0f.. of the width: positive values of `computed`.
  const uint64_t ones = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  const auto pattern = [ones](uint64_t divisor) { return static_cast<int64_t>(ones / divisor); };
  v = at::sub(v, at::bitwise_right_shift(v, 1).bitwise_and_(pattern(3)));                          // per 2 bits
  v = at::bitwise_and(v, pattern(5)).add_(at::bitwise_right_shift(v, 2).bitwise_and_(pattern(5)));  // per 4
  v = at::add(v, at::bitwise_right_shift(v, 4)).bitwise_and_(pattern(17));                          // per byte
  for (int64_t shift = 8; shift < bits; shift *= 2) v.add_(at::bitwise_right_shift(v, shift));   // non-negative
  out.copy_(v.bitwise_and_(0x7f));
}

}  // namespace composite

}  // namespace torchops
