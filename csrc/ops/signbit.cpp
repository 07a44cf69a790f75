// torchops::signbit's entries, CPU and device-generic, and its composite compute op: its
// check of x (csrc/ops/checks.h) and its kernels; the rest is csrc/ops/unary.h's. The rules:
// docs/semantics.md.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <ATen/ATen.h>

#include <cstring>

#include "dispatch/capability.h"
#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/cpu.h"
#include "ops/unary.h"

namespace torchops {
namespace {

// out[i] = the sign bit of x[i], for the rows of contiguous elements of `dtype`.
void signbit_rows(at::ScalarType dtype, const void* x, void* out, const Rows& rows) {
  bool* signs = static_cast<bool*>(out);
  if (sign_in_top_bit(dtype)) {
    active_kernels().signbit(static_cast<int>(at::elementSize(dtype)), x, signs, rows);
  } else {  // unsigned or bool: never negative
    for (int64_t r = 0; r < rows.rows; ++r) std::memset(signs + r * rows.out_stride, 0, rows.n * sizeof(bool));
  }
}

constexpr UnaryOp kSignbit{kSignbitOp, at::kBool, &check_signbit_input, &signbit_rows, &op::signbit_compute};

}  // namespace

namespace cpu {

at::Tensor signbit(const at::Tensor& x) { return unary(kSignbit, x); }
at::Tensor& signbit_out(const at::Tensor& x, at::Tensor& out) { return unary_out(kSignbit, x, out); }

}  // namespace cpu

namespace composite {

at::Tensor signbit(const at::Tensor& x) { return unary(kSignbit, x); }
at::Tensor& signbit_out(const at::Tensor& x, at::Tensor& out) { return unary_out(kSignbit, x, out); }

void signbit_compute(at::Tensor& out, const at::Tensor& x) {
  const at::ScalarType dtype = x.scalar_type();
  if (!sign_in_top_bit(dtype)) {  // unsigned or bool: never negative
    out.zero_();
  } else if (at::isFloatingType(dtype)) {  // the IEEE sign bit: the same-width integer's sign
    at::lt_out(out, x.view(signed_of_width(dtype)), 0);
  } else {
    at::lt_out(out, x, 0);
  }
}

}  // namespace composite

}  // namespace torchops
