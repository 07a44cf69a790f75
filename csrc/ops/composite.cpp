// The device-generic kernels of bitshift: every overload on every backend that has no kernel
// of its own (CUDA, XPU, MPS, PrivateUse1, ...), with the CPU kernels' answers
// (docs/semantics.md), and what every op's device-generic entries and compute ops share.
// The unary ops' (signbit, bitwise_count) are in their own files, through csrc/ops/unary.h.
//
// An entry runs the CPU entry's checks (csrc/ops/checks.h) in the same order, then has
// TensorIterator allocate the result, or resize out=, exactly as the CPU kernels' iterator
// does (layout, resize warning, overlap refusals), and hands it to the op's compute op, a
// private op (csrc/overloads.h's TORCHOPS_FOR_EACH_COMPUTE) called through the dispatcher,
// whose kernel is Triton's on CUDA and XPU when torchops/_triton.py registered it, the
// composite one elsewhere.
//
// The composite compute ops are made of ATen ops only, so they run wherever ATen runs,
// without Python. Nothing in them depends on a device's own treatment of out-of-range counts
// or of the unsigned dtypes, which differ (PyTorch's CUDA shifts take no uint16/32/64 and
// have no logical right shift): values are computed on the bits of the signed dtype of the
// result's width, and every count is brought into range before it reaches a shift.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include "ops/composite.h"

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <vector>

#include "ops/checks.h"

namespace torchops {
namespace composite {

namespace {

// The layout the CPU kernels' iterator gives a result of `dtype` when it converts the inputs
// of another dtype first (`promotes`: csrc/ops/bitshift.cpp's promote_inputs_to_common_dtype,
// which TensorIterator applies on the CPU only): it lays the result out by the converted
// copies, whose strides are Tensor::to's (an input's own when it is dense, else a dense
// order of them). Worked out on meta stand-ins, which have the same strides and no data; an
// undefined tensor when the inputs' own strides give the same layout (every converted input
// dense, or none converted).
at::Tensor promoted_layout(std::initializer_list<const at::Tensor*> inputs, at::ScalarType dtype, bool promotes) {
  if (!promotes) return at::Tensor();
  bool converted_non_dense = false;
  for (const at::Tensor* input : inputs) {
    converted_non_dense = converted_non_dense || (input->scalar_type() != dtype && !input->is_non_overlapping_and_dense());
  }
  if (!converted_non_dense) return at::Tensor();
  // The config borrows its tensors: they must stay where they are until it is built.
  std::vector<at::Tensor> stand_ins;
  stand_ins.reserve(inputs.size());
  at::Tensor output;
  at::TensorIteratorConfig config;
  config.check_all_same_dtype(false).declare_static_dtype(dtype).add_output(output);
  for (const at::Tensor* input : inputs) {
    stand_ins.push_back(at::empty_strided(input->sizes(), input->strides(), input->options().device(at::kMeta)).to(dtype));
    config.add_const_input(stand_ins.back());
  }
  return config.build().output();
}

}  // namespace

at::Tensor output_for(const char* op_name, const at::Tensor& out, std::initializer_list<const at::Tensor*> inputs,
                      at::ScalarType dtype, bool resize, bool promotes) {
  const at::Tensor layout = resize ? promoted_layout(inputs, dtype, promotes) : at::Tensor();
  // A new result is allocated in that layout (the iterator then keeps it); an out= that the
  // iterator resizes is given it afterwards, as the CPU kernels' iterator restrides it.
  const at::Tensor output = out.defined() || !layout.defined()
      ? out : at::empty_strided(layout.sizes(), layout.strides(), inputs.begin()[0]->options().dtype(dtype));
  // The iterator resizes an out= exactly when it is not of the result's shape.
  const bool restrided = out.defined() && layout.defined() && !out.sizes().equals(layout.sizes());
  at::Tensor result = build_iter(op_name, output, [&] {
    at::TensorIteratorConfig config;
    config.set_check_mem_overlap(true)
        .check_all_same_dtype(false)
        .declare_static_dtype(dtype)
        .resize_outputs(resize)
        .add_output(output);
    for (const at::Tensor* input : inputs) config.add_const_input(*input);
    return config.build();
  }).output();
  if (restrided) result.as_strided_(layout.sizes(), layout.strides());
  return result;
}

at::Tensor bits_as(const at::Tensor& tensor, at::ScalarType result, at::ScalarType computed) {
  return tensor.scalar_type() == result ? tensor.view(computed) : tensor.to(computed);
}

at::ScalarType signed_of_width(at::ScalarType dtype) {
  switch (at::elementSize(dtype)) {
    case 1: return at::kChar;
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: return at::kLong;
  }
}

}  // namespace composite

namespace {

// A Python-int count as the compute ops take it: every count of 64 or more (and every negative
// one, which scalar_count made the largest uint64) is out of range for every dtype.
int64_t clamped_count(uint64_t count) {
  return static_cast<int64_t>(std::min<uint64_t>(count, 64));
}

}  // namespace

namespace composite {

at::Tensor bitshift(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic) {
  check_strided(kBitshiftOp, {{"x", &x}, {"y", &y}});
  check_same_device(kBitshiftOp, x, {{"y", &y}});
  const at::ScalarType dtype = shift_result_type(kBitshiftOp, x, y, kBitshiftOtherCounts);
  const ShiftOp op = parse_shift_op(kBitshiftOp, direction, arithmetic, dtype);
  broadcast_shape(kBitshiftOp, x, y, dtype);
  at::Tensor out = output_for(kBitshiftOp, at::Tensor(), {&x, &y}, dtype, /*resize=*/true, /*promotes=*/true);
  op::bitshift_compute().call(out, x, y, static_cast<int64_t>(op));
  return out;
}

at::Tensor& bitshift_out(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic,
                         at::Tensor& out) {
  check_strided(kBitshiftOp, {{"x", &x}, {"y", &y}, {"out", &out}});
  check_same_device(kBitshiftOp, x, {{"y", &y}, {"out", &out}});
  const at::ScalarType dtype = shift_result_type(kBitshiftOp, x, y, kBitshiftOtherCounts);
  const ShiftOp op = parse_shift_op(kBitshiftOp, direction, arithmetic, dtype);
  check_out_dtype(kBitshiftOp, out, dtype);
  check_writable(kBitshiftOp, "out", out);
  broadcast_shape(kBitshiftOp, x, y, dtype);
  output_for(kBitshiftOp, out, {&x, &y}, dtype, /*resize=*/true, /*promotes=*/true);
  op::bitshift_compute().call(out, x, y, static_cast<int64_t>(op));
  return out;
}

at::Tensor& bitshift_inplace(at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic) {
  check_strided(kBitshiftInplaceOp, {{"x", &x}, {"y", &y}});
  check_same_device(kBitshiftInplaceOp, x, {{"y", &y}});
  const at::ScalarType dtype = shift_result_type(kBitshiftInplaceOp, x, y, kBitshiftOtherCounts);
  const ShiftOp op = parse_shift_op(kBitshiftInplaceOp, direction, arithmetic, dtype);
  check_inplace_dtype(dtype, x, y);
  check_writable(kBitshiftInplaceOp, "x", x);
  check_inplace_shape(broadcast_shape(kBitshiftInplaceOp, x, y, dtype), x);
  output_for(kBitshiftInplaceOp, x, {&x, &y}, dtype, /*resize=*/false, /*promotes=*/true);
  op::bitshift_compute().call(x, x, y, static_cast<int64_t>(op));
  return x;
}

at::Tensor bitshift_scalar(const at::Tensor& x, const at::Scalar& y, c10::string_view direction, bool arithmetic) {
  check_strided(kBitshiftOp, {{"x", &x}});
  check_shift_tensor(kBitshiftOp, "x", x);
  const ShiftOp op = parse_shift_op(kBitshiftOp, direction, arithmetic, x.scalar_type());
  const uint64_t count = scalar_count(kBitshiftOp, y);
  at::Tensor out = output_for(kBitshiftOp, at::Tensor(), {&x}, x.scalar_type(), /*resize=*/true, /*promotes=*/false);
  op::bitshift_scalar_compute().call(out, x, clamped_count(count), static_cast<int64_t>(op));
  return out;
}

at::Tensor& bitshift_scalar_out(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                bool arithmetic, at::Tensor& out) {
  check_strided(kBitshiftOp, {{"x", &x}, {"out", &out}});
  check_same_device(kBitshiftOp, x, {{"out", &out}});
  check_shift_tensor(kBitshiftOp, "x", x);
  const ShiftOp op = parse_shift_op(kBitshiftOp, direction, arithmetic, x.scalar_type());
  const uint64_t count = scalar_count(kBitshiftOp, y);
  check_out_dtype(kBitshiftOp, out, x.scalar_type());
  check_writable(kBitshiftOp, "out", out);
  output_for(kBitshiftOp, out, {&x}, x.scalar_type(), /*resize=*/true, /*promotes=*/false);
  op::bitshift_scalar_compute().call(out, x, clamped_count(count), static_cast<int64_t>(op));
  return out;
}

at::Tensor& bitshift_scalar_inplace(at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                    bool arithmetic) {
  check_strided(kBitshiftInplaceOp, {{"x", &x}});
  check_shift_tensor(kBitshiftInplaceOp, "x", x);
  const ShiftOp op = parse_shift_op(kBitshiftInplaceOp, direction, arithmetic, x.scalar_type());
  const uint64_t count = scalar_count(kBitshiftInplaceOp, y);
  check_writable(kBitshiftInplaceOp, "x", x);
  output_for(kBitshiftInplaceOp, x, {&x}, x.scalar_type(), /*resize=*/false, /*promotes=*/false);
  op::bitshift_scalar_compute().call(x, x, clamped_count(count), static_cast<int64_t>(op));
  return x;
}

// The compute ops. Each computes the whole result before it writes `out`, which may be x
// itself.

void bitshift_compute(at::Tensor& out, const at::Tensor& x, const at::Tensor& y, int64_t op) {
  const at::ScalarType result = out.scalar_type();
  const at::ScalarType computed = signed_of_width(result);
  const int64_t bits = static_cast<int64_t>(at::elementSize(result)) * 8;
  const at::Tensor values = bits_as(x, result, computed);
  const at::Tensor counts = bits_as(y, result, computed);
  // An unsigned count's bits read as signed are < 0 or >= n exactly when the count is >= n.
  const at::Tensor in_range = counts.ge(0).logical_and_(counts.lt(bits));
  at::Tensor shifted;
  switch (static_cast<ShiftOp>(op)) {
    case ShiftOp::RightArithmetic:  // out of range: the sign fill alone, a shift by n - 1
      shifted = at::bitwise_right_shift(values, at::where(in_range, counts, bits - 1));
      break;
    case ShiftOp::Left:
      shifted = at::where(in_range, at::bitwise_left_shift(values, at::where(in_range, counts, 0)), 0);
      break;
    case ShiftOp::RightLogical: {
      // The arithmetic shift, then the `count` copies of the sign bit that entered cleared:
      // they are the bits of (MIN >> count) << 1.
      const at::Tensor count = at::where(in_range, counts, 0);
      const at::Tensor lowest = at::scalar_tensor(std::numeric_limits<int64_t>::min() >> (64 - bits),
                                                  values.options().dtype(computed));
      const at::Tensor filled = at::bitwise_left_shift(at::bitwise_right_shift(lowest, count), 1);
      shifted = at::where(in_range, at::bitwise_right_shift(values, count).bitwise_and_(filled.bitwise_not()), 0);
      break;
    }
  }
  out.view(computed).copy_(shifted);
}

void bitshift_scalar_compute(at::Tensor& out, const at::Tensor& x, int64_t count, int64_t op) {
  const at::ScalarType computed = signed_of_width(out.scalar_type());
  const int64_t bits = static_cast<int64_t>(at::elementSize(out.scalar_type())) * 8;
  const at::Tensor values = x.view(computed);
  const bool in_range = count < bits;
  at::Tensor shifted;
  switch (static_cast<ShiftOp>(op)) {
    case ShiftOp::RightArithmetic:
      shifted = at::bitwise_right_shift(values, in_range ? count : bits - 1);
      break;
    case ShiftOp::Left:
      if (!in_range) return void(out.zero_());
      shifted = at::bitwise_left_shift(values, count);
      break;
    case ShiftOp::RightLogical:
      if (!in_range) return void(out.zero_());
      // The arithmetic shift with its n - count low bits kept (by 0: x itself; out may be x,
      // which copy_ takes as it is).
      shifted = count == 0 ? values : at::bitwise_right_shift(values, count).bitwise_and_((int64_t(1) << (bits - count)) - 1);
      break;
  }
  out.view(computed).copy_(shifted);
}

}  // namespace composite
}  // namespace torchops
