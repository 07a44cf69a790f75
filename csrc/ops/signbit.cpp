// CPU entry points of torchops::signbit: the checks (csrc/ops/checks.h), TensorIterator
// set-up and the call into the kernel table. The rules themselves: docs/semantics.md.
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>

#include "dispatch/capability.h"
#include "ops/common.h"
#include "ops/cpu.h"
#include "ops/parallel.h"

namespace torchops {
namespace {

constexpr const char* kOp = kSignbitOp;

// PyTorch's configuration for ops such as torch.signbit, so outputs get the same layout.
at::TensorIterator signbit_iter(const at::Tensor& out, const at::Tensor& x) {
  return build_iter(kOp, [&] {
    return at::TensorIteratorConfig()
        .set_check_mem_overlap(true)
        .check_all_same_dtype(false)
        .declare_static_dtype(at::kBool)
        .declare_static_device(x.device())
        .add_output(out)
        .add_const_input(x)
        .build();
  });
}

// out[i] = the sign bit of x[i], for the rows of contiguous elements of `dtype` (n > 0).
void write_signbits(at::ScalarType dtype, int64_t width, const void* x, bool* out, const Rows& rows) {
  if (sign_in_top_bit(dtype)) {
    active_kernels().signbit(static_cast<int>(width), x, out, rows);
  } else {  // unsigned or bool: never negative
    for (int64_t r = 0; r < rows.rows; ++r) std::memset(out + r * rows.out_stride, 0, rows.n * sizeof(bool));
  }
}

void signbit_loop(at::TensorIteratorBase& iter) {
  const at::ScalarType dtype = iter.input_dtype(0);
  const int64_t width = iter.element_size(1);
  for_each_loop2d(iter, [&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
    const LoopOperand out{data[0], strides[0], strides[2], sizeof(bool)};
    const LoopOperand x{data[1], strides[1], strides[3], width};
    run_rows<1>([&](const Block<1>& b) {
      write_signbits(dtype, width, b.inputs[0], static_cast<bool*>(b.out),
                     Rows{b.n, b.rows, b.input_strides[0], 0, b.out_stride});
    }, out, {x}, n, rows, /*streaming=*/false);
  });
}

// A contiguous x (and out) of a call that runs on one thread, without TensorIterator, which
// would decide the same (a contiguous bool output of x's shape, one row); see
// csrc/ops/bitshift.cpp.
bool direct(const at::Tensor& x) {
  return x.is_contiguous() && runs_on_calling_thread(x.numel());
}

void signbit_contiguous(const at::Tensor& out, const at::Tensor& x) {
  if (x.numel() == 0) return;  // an empty tensor's data may be null, which no kernel may be handed
  write_signbits(x.scalar_type(), x.element_size(), x.const_data_ptr(), out.data_ptr<bool>(),
                 Rows{x.numel(), 1, 0, 0, 0});
}

}  // namespace

// The CPU kernels (csrc/ops/cpu.h).
namespace cpu {

at::Tensor signbit(const at::Tensor& x) {
  check_signbit_input(x);
  if (direct(x)) {
    at::Tensor out = at::detail::empty_cpu(x.sizes(), at::kBool);
    signbit_contiguous(out, x);
    return out;
  }
  at::Tensor out;
  auto iter = signbit_iter(out, x);
  signbit_loop(iter);
  return iter.output();
}

at::Tensor& signbit_out(const at::Tensor& x, at::Tensor& out) {
  check_signbit_input(x);
  check_signbit_out_dtype(out);
  check_writable(kOp, "out", out);
  if (direct(x) && out.is_contiguous() && out.sizes().equals(x.sizes()) && overlaps_at_most_fully(out, x)) {
    signbit_contiguous(out, x);
    return out;
  }
  auto iter = signbit_iter(out, x);
  signbit_loop(iter);
  return out;
}

}  // namespace cpu

}  // namespace torchops
