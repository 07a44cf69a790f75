#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include "ops/unary.h"

#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>

#include "ops/common.h"
#include "ops/composite.h"
#include "ops/memory.h"
#include "ops/parallel.h"

namespace torchops {
namespace {

at::ScalarType result_dtype(const UnaryOp& op, const at::Tensor& x) {
  return op.result_dtype == kDtypeOfX ? x.scalar_type() : op.result_dtype;
}

// PyTorch's configuration for ops such as torch.signbit, so outputs get the same layout.
at::TensorIterator unary_iter(const UnaryOp& op, const at::Tensor& out, const at::Tensor& x) {
  return build_iter(op.name, out, [&] {
    return at::TensorIteratorConfig()
        .set_check_mem_overlap(true)
        .check_all_same_dtype(false)
        .declare_static_dtype(result_dtype(op, x))
        .declare_static_device(x.device())
        .add_output(out)
        .add_const_input(x)
        .build();
  });
}

// The grain of a call: each element reads x's width and writes the result's.
int64_t grain(const UnaryOp& op, const at::Tensor& x) {
  return grain_for(x.element_size() + static_cast<int64_t>(c10::elementSize(result_dtype(op, x))));
}

void run_iter(const UnaryOp& op, at::TensorIteratorBase& iter) {
  const at::ScalarType dtype = iter.input_dtype(0);
  const int64_t out_width = iter.element_size(0);
  const int64_t width = iter.element_size(1);
  for_each_loop2d(iter, [&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
    const LoopOperand out{data[0], strides[0], strides[2], out_width};
    const LoopOperand x{data[1], strides[1], strides[3], width};
    run_rows<1>([&](const Block<1>& b) {
      op.cpu_rows(dtype, b.inputs[0], b.out, Rows{b.n, b.rows, b.input_strides[0], 0, b.out_stride});
    }, out, {x}, n, rows, /*streaming=*/false);
  }, grain_for(out_width + width));
}

// A contiguous x (and out) of a call that runs on one thread, without TensorIterator, which
// would decide the same (a contiguous output of x's shape, one row); see
// csrc/ops/bitshift.cpp.
bool direct(const UnaryOp& op, const at::Tensor& x) {
  return x.is_contiguous() && runs_on_calling_thread(x.numel(), grain(op, x));
}

void run_contiguous(const UnaryOp& op, const at::Tensor& out, const at::Tensor& x) {
  if (x.numel() == 0) return;  // an empty tensor's data may be null, which no kernel may be handed
  op.cpu_rows(x.scalar_type(), x.const_data_ptr(), out.data_ptr(), Rows{x.numel(), 1, 0, 0, 0});
}

}  // namespace

namespace cpu {

at::Tensor unary(const UnaryOp& op, const at::Tensor& x) {
  op.check_x(op.name, x);
  if (direct(op, x)) {
    at::Tensor out = at::detail::empty_cpu(x.sizes(), result_dtype(op, x));
    run_contiguous(op, out, x);
    return out;
  }
  at::Tensor out;
  auto iter = unary_iter(op, out, x);
  advise_huge_pages(iter.output());
  run_iter(op, iter);
  return iter.output();
}

at::Tensor& unary_out(const UnaryOp& op, const at::Tensor& x, at::Tensor& out) {
  op.check_x(op.name, x);
  check_out_dtype(op.name, out, result_dtype(op, x));
  check_writable(op.name, "out", out);
  if (direct(op, x) && out.is_contiguous() && out.sizes().equals(x.sizes()) && overlaps_at_most_fully(out, x)) {
    run_contiguous(op, out, x);
    return out;
  }
  auto iter = unary_iter(op, out, x);
  run_iter(op, iter);
  return out;
}

}  // namespace cpu

namespace composite {

at::Tensor unary(const UnaryOp& op, const at::Tensor& x) {
  check_strided(op.name, {{"x", &x}});
  op.check_x(op.name, x);
  at::Tensor out = output_for(op.name, at::Tensor(), {&x}, result_dtype(op, x), /*resize=*/true, /*promotes=*/false);
  op.compute().call(out, x);
  return out;
}

at::Tensor& unary_out(const UnaryOp& op, const at::Tensor& x, at::Tensor& out) {
  check_strided(op.name, {{"x", &x}, {"out", &out}});
  check_same_device(op.name, x, {{"out", &out}});
  op.check_x(op.name, x);
  check_out_dtype(op.name, out, result_dtype(op, x));
  check_writable(op.name, "out", out);
  output_for(op.name, out, {&x}, result_dtype(op, x), /*resize=*/true, /*promotes=*/false);
  op.compute().call(out, x);
  return out;
}

}  // namespace composite

}  // namespace torchops
