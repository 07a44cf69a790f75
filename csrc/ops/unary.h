// The entries of a unary pointwise op whose result has one dtype for every x (signbit's
// bool, bitwise_count's uint8) or x's own (kDtypeOfX: a bit reverse): everything they share, so that an op's file holds only what
// is its own, a UnaryOp (its name, result dtype, check of x, CPU kernel and compute op) and
// its entries, each a call of the functions below.
//
// The CPU entries check, then write a contiguous x of a call that runs on one thread
// directly (the result TensorIterator would give: contiguous, of x's shape, one row), and
// every other call through TensorIterator, configured as PyTorch's own unary ops with a
// static result dtype (torch.signbit's), so that the result's layout and out='s resizing
// (its warning included) and overlap refusals are theirs. The device-generic entries run
// the same checks after the strided and same-device ones, have TensorIterator allocate the
// result (csrc/ops/composite.h's output_for) and call the op's compute op.
#pragma once

#include <ATen/ATen.h>

#include "kernels/kernels.h"
#include "overloads.h"

namespace torchops {

// UnaryOp::result_dtype of an op whose result has x's dtype.
constexpr at::ScalarType kDtypeOfX = at::ScalarType::Undefined;

struct UnaryOp {
  // The op as its messages name it (csrc/ops/checks.h's kSignbitOp, ...).
  const char* name;
  // The result's dtype, whatever x's; or kDtypeOfX.
  at::ScalarType result_dtype;
  // The op's checks of x, named by `op_name` (this op's name): defined, then of a dtype the op
  // takes (csrc/ops/checks.h has those that several ops make).
  void (*check_x)(const char* op_name, const at::Tensor& x);
  // The CPU kernel: the results, of result_dtype, of `rows` (rows.x_stride and
  // rows.out_stride apart, rows.n > 0) of contiguous elements of x's dtype.
  void (*cpu_rows)(at::ScalarType dtype, const void* x, void* out, const Rows& rows);
  // The device-generic entries' compute op (csrc/overloads.h's TORCHOPS_FOR_EACH_COMPUTE).
  const c10::TypedOperatorHandle<op::UnaryCompute>& (*compute)();
};

namespace cpu {
at::Tensor unary(const UnaryOp& op, const at::Tensor& x);
at::Tensor& unary_out(const UnaryOp& op, const at::Tensor& x, at::Tensor& out);
}  // namespace cpu

namespace composite {
at::Tensor unary(const UnaryOp& op, const at::Tensor& x);
at::Tensor& unary_out(const UnaryOp& op, const at::Tensor& x, at::Tensor& out);
}  // namespace composite

}  // namespace torchops
