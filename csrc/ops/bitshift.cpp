// CPU entries of torchops::bitshift: the argument checks (csrc/ops/checks.h),
// TensorIterator set-up (broadcasting, promotion, strides, output allocation, threads) and
// the call into the kernel table. The rules themselves: docs/semantics.md.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/TensorIterator.h>

#include "dispatch/capability.h"
#include "ops/common.h"
#include "ops/cpu.h"
#include "ops/memory.h"
#include "ops/parallel.h"

namespace torchops {
namespace {

constexpr const char* kOp = kBitshiftOp;
constexpr const char* kInplaceOp = kBitshiftInplaceOp;

// Streaming (non-temporal) stores write output lines without reading them first, which
// saves a third of the memory traffic of x >> 3 (a quarter of x >> y). But they send the
// output to memory even when it would have stayed in cache for the next op, so they are
// used only for outputs that fill a large last-level cache on their own (32 MiB; measured
// on a 32 MiB-L3 machine, docs/performance.md). Never in place, where the output's lines
// have just been read as the input, nor on short rows (a broadcast count of shape
// (rows, 1)), where the fence after each row costs more than streaming saves, nor through
// run_rows's tiles (the same: a fence per tile).
constexpr int64_t kStreamingMinBytes = int64_t(32) << 20;
constexpr int64_t kStreamingMinRowBytes = int64_t(64) << 10;

bool use_streaming_stores(int64_t out_bytes, int64_t row_bytes, bool out_is_an_input) {
  return out_bytes >= kStreamingMinBytes && row_bytes >= kStreamingMinRowBytes && !out_is_an_input;
}

// Whether the rows of n elements of `width` bytes of this iterator's loops stream.
bool streams_rows(const at::TensorIteratorBase& iter, int64_t n, int64_t width) {
  bool out_is_an_input = false;
  for (int arg = iter.noutputs(); arg < iter.ntensors(); ++arg) {
    out_is_an_input = out_is_an_input || iter.data_ptr(arg) == iter.data_ptr(0);
  }
  return use_streaming_stores(iter.numel() * iter.element_size(0), n * width, out_is_an_input);
}

// ---------------------------------------------------------------------------------------
// Contiguous operands of one shape and dtype, without TensorIterator.
//
// In the common case (x, the count and out contiguous, of one shape and dtype) of a call
// that runs on one thread (csrc/ops/parallel.h), TensorIterator would decide what is
// decided here directly: a contiguous output of that shape, no conversion, every element
// in one row. Its set-up is most of the cost of a small call, so these calls skip it; every
// other call, and every error, goes through it.

bool contiguous_as(const at::Tensor& tensor, at::IntArrayRef sizes, at::ScalarType dtype) {
  return tensor.scalar_type() == dtype && tensor.is_contiguous() && tensor.sizes().equals(sizes);
}

// Whether x and the count (nullptr: a Python-int count) take the direct path, into a new
// output or into `out` (nullptr: a new one; x itself in place).
bool direct(const at::Tensor& x, const at::Tensor* count, const at::Tensor* out, at::ScalarType dtype) {
  // Each element reads x (and its count) and writes the result, all of the result's width.
  const int64_t grain = grain_for(static_cast<int64_t>(c10::elementSize(dtype)) * (count != nullptr ? 3 : 2));
  if (!contiguous_as(x, x.sizes(), dtype) || !runs_on_calling_thread(x.numel(), grain)) return false;
  if (count != nullptr && !contiguous_as(*count, x.sizes(), dtype)) return false;
  if (out == nullptr) return true;
  return contiguous_as(*out, x.sizes(), dtype) && overlaps_at_most_fully(*out, x) &&
         (count == nullptr || overlaps_at_most_fully(*out, *count));
}

// out = x shifted by count (a tensor of x's shape, or nullptr with `scalar` the count).
void shift_contiguous(ShiftOp op, const at::Tensor& out, const at::Tensor& x, const at::Tensor* count,
                      uint64_t scalar) {
  const int64_t width = x.element_size();
  const int64_t n = x.numel();
  if (n == 0) return;  // an empty tensor's data may be null, which no kernel may be handed
  const KernelTable& kernels = active_kernels();
  const void* x_data = x.const_data_ptr();
  void* out_data = out.data_ptr();
  const bool out_is_an_input = out_data == x_data || (count != nullptr && out_data == count->const_data_ptr());
  // The whole output is one contiguous row.
  const bool streams = use_streaming_stores(n * width, n * width, out_is_an_input);
  const Rows one_row{n, 1, 0, 0, 0};
  if (count != nullptr) {
    kernels.shift(op, width, x_data, count->const_data_ptr(), out_data, one_row, streams);
  } else {
    kernels.shift_by_scalar(op, width, x_data, scalar, out_data, one_row, streams);
  }
}

// x shifted by one count into out, for `rows` rows of x and out (a Python-int count, or a
// tensor count broadcast along rows).
void shift_rows_by_scalar(const KernelTable& kernels, ShiftOp op, uint64_t count, const LoopOperand& out,
                          const LoopOperand& x, int64_t n, int64_t rows, bool streams) {
  run_rows<1>([&](const Block<1>& b) {
    kernels.shift_by_scalar(op, static_cast<int>(x.elem_size), b.inputs[0], count, b.out,
                            Rows{b.n, b.rows, b.input_strides[0], 0, b.out_stride}, b.streaming);
  }, out, {x}, n, rows, streams);
}

// Tensor count: inputs were converted to the result dtype by the iterator, so the count
// has x's width. One count for the whole loop (0-d) goes to the one-count kernel; one count
// per row (shape (rows, 1)) to the per-row kernel, which reads it once per row and shifts
// the row as the one-count kernel does, one array less to read than a count per element
// (run_rows hands it over on rows long enough not to be merged).
void run_rows_tensor_count(at::TensorIteratorBase& iter, ShiftOp op) {
  const int64_t width = iter.element_size(0);
  TORCH_INTERNAL_ASSERT(iter.dtype(1) == iter.dtype(0) && iter.dtype(2) == iter.dtype(0));
  const KernelTable& kernels = active_kernels();
  for_each_loop2d(iter, [&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
    const LoopOperand out{data[0], strides[0], strides[3], width};
    const LoopOperand x{data[1], strides[1], strides[4], width};
    const LoopOperand count{data[2], strides[2], strides[5], width};
    const bool streams = streams_rows(iter, n, width);
    // An operand that is neither contiguous nor repeated along its rows (a transposed x, every
    // other element) would be copied into run_rows's tiles: the largest step of those, or 0.
    const auto gathered_step = [](const LoopOperand& op) {
      return op.inner != 0 && !op.rows_contiguous() ? op.inner : int64_t(0);
    };
    const int64_t step = std::max({gathered_step(out), gathered_step(x), gathered_step(count)});
    if (count.inner == 0 && count.outer == 0) {  // one count for the whole loop
      uint64_t c = 0;
      std::memcpy(&c, count.data, width);  // little-endian: the low bytes of c
      shift_rows_by_scalar(kernels, op, c, out, x, n, rows, streams);
    } else if (step != 0 && kernels.strided_shift_in_place(static_cast<int>(width), step)) {
      kernels.shift_strided(op, static_cast<int>(width), x.data, count.data, out.data,
                            Rows{n, rows, x.outer, count.outer, out.outer}, Steps{x.inner, count.inner, out.inner});
    } else {
      run_rows<2>([&](const Block<2>& b) {
        const auto shift = b.one_per_row[1] ? kernels.shift_by_row_count : kernels.shift;
        shift(op, static_cast<int>(width), b.inputs[0], b.inputs[1], b.out,
              Rows{b.n, b.rows, b.input_strides[0], b.input_strides[1], b.out_stride}, b.streaming);
      }, out, {x, count}, n, rows, streams, /*per_row_inputs=*/0b10);
    }
  }, grain_for(3 * width));  // x, its count and the result, all of the result's width
}

void run_rows_scalar_count(at::TensorIteratorBase& iter, ShiftOp op, uint64_t count) {
  const int64_t width = iter.element_size(0);
  const KernelTable& kernels = active_kernels();
  for_each_loop2d(iter, [&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
    const LoopOperand out{data[0], strides[0], strides[2], width};
    const LoopOperand x{data[1], strides[1], strides[3], width};
    shift_rows_by_scalar(kernels, op, count, out, x, n, rows, streams_rows(iter, n, width));
  }, grain_for(2 * width));  // x and the result
}

// The configurations of PyTorch's own binary and unary pointwise ops, so that outputs get
// the same layout as theirs (and out= is resized the same way). No casting options: out=
// already has the result dtype (check_out_dtype), and the inputs are promoted to it.
at::TensorIterator tensor_count_iter(const char* op_name, const at::Tensor& out, const at::Tensor& x,
                                     const at::Tensor& y, bool resize) {
  return build_iter(op_name, out, [&] {
    return at::TensorIteratorConfig()
        .set_check_mem_overlap(true)
        .allow_cpu_scalars(true)
        .promote_inputs_to_common_dtype(true)
        .resize_outputs(resize)
        .add_output(out)
        .add_const_input(x)
        .add_const_input(y)
        .build();
  });
}

at::TensorIterator scalar_count_iter(const char* op_name, const at::Tensor& out, const at::Tensor& x, bool resize) {
  return build_iter(op_name, out, [&] {
    return at::TensorIteratorConfig()
        .set_check_mem_overlap(true)
        .check_all_same_dtype(true)
        .resize_outputs(resize)
        .add_output(out)
        .add_const_input(x)
        .build();
  });
}

}  // namespace

// The CPU kernels (csrc/ops/cpu.h).
namespace cpu {

at::Tensor bitshift(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic) {
  const at::ScalarType dtype = shift_result_type(kOp, x, y, kBitshiftOtherCounts);
  const ShiftOp op = parse_shift_op(kOp, direction, arithmetic, dtype);
  if (direct(x, &y, nullptr, dtype)) {
    at::Tensor out = at::detail::empty_cpu(x.sizes(), dtype);
    shift_contiguous(op, out, x, &y, 0);
    return out;
  }
  broadcast_shape(kOp, x, y, dtype);
  at::Tensor out;
  auto iter = tensor_count_iter(kOp, out, x, y, /*resize=*/true);
  advise_huge_pages(iter.output());
  run_rows_tensor_count(iter, op);
  return iter.output();
}

at::Tensor& bitshift_out(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic,
                         at::Tensor& out) {
  const at::ScalarType dtype = shift_result_type(kOp, x, y, kBitshiftOtherCounts);
  const ShiftOp op = parse_shift_op(kOp, direction, arithmetic, dtype);
  check_out_dtype(kOp, out, dtype);
  check_writable(kOp, "out", out);
  if (direct(x, &y, &out, dtype)) {
    shift_contiguous(op, out, x, &y, 0);
    return out;
  }
  broadcast_shape(kOp, x, y, dtype);
  auto iter = tensor_count_iter(kOp, out, x, y, /*resize=*/true);
  run_rows_tensor_count(iter, op);
  return out;
}

at::Tensor& bitshift_inplace(at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic) {
  const at::ScalarType dtype = shift_result_type(kInplaceOp, x, y, kBitshiftOtherCounts);
  const ShiftOp op = parse_shift_op(kInplaceOp, direction, arithmetic, dtype);
  check_inplace_dtype(dtype, x, y);
  check_writable(kInplaceOp, "x", x);
  if (direct(x, &y, &x, dtype)) {
    shift_contiguous(op, x, x, &y, 0);
    return x;
  }
  const at::DimVector shape = broadcast_shape(kInplaceOp, x, y, dtype);
  check_inplace_shape(shape, x);
  auto iter = tensor_count_iter(kInplaceOp, x, x, y, /*resize=*/false);
  run_rows_tensor_count(iter, op);
  return x;
}

at::Tensor bitshift_scalar(const at::Tensor& x, const at::Scalar& y, c10::string_view direction, bool arithmetic) {
  check_shift_tensor(kOp, "x", x);
  const ShiftOp op = parse_shift_op(kOp, direction, arithmetic, x.scalar_type());
  const uint64_t count = scalar_count(kOp, y);
  if (direct(x, nullptr, nullptr, x.scalar_type())) {
    at::Tensor out = at::detail::empty_cpu(x.sizes(), x.scalar_type());
    shift_contiguous(op, out, x, nullptr, count);
    return out;
  }
  at::Tensor out;
  auto iter = scalar_count_iter(kOp, out, x, /*resize=*/true);
  advise_huge_pages(iter.output());
  run_rows_scalar_count(iter, op, count);
  return iter.output();
}

at::Tensor& bitshift_scalar_out(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                bool arithmetic, at::Tensor& out) {
  check_shift_tensor(kOp, "x", x);
  const ShiftOp op = parse_shift_op(kOp, direction, arithmetic, x.scalar_type());
  const uint64_t count = scalar_count(kOp, y);
  check_out_dtype(kOp, out, x.scalar_type());
  check_writable(kOp, "out", out);
  if (direct(x, nullptr, &out, x.scalar_type())) {
    shift_contiguous(op, out, x, nullptr, count);
    return out;
  }
  auto iter = scalar_count_iter(kOp, out, x, /*resize=*/true);
  run_rows_scalar_count(iter, op, count);
  return out;
}

at::Tensor& bitshift_scalar_inplace(at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                    bool arithmetic) {
  check_shift_tensor(kInplaceOp, "x", x);
  const ShiftOp op = parse_shift_op(kInplaceOp, direction, arithmetic, x.scalar_type());
  const uint64_t count = scalar_count(kInplaceOp, y);
  check_writable(kInplaceOp, "x", x);
  if (direct(x, nullptr, &x, x.scalar_type())) {
    shift_contiguous(op, x, x, nullptr, count);
    return x;
  }
  auto iter = scalar_count_iter(kInplaceOp, x, x, /*resize=*/false);
  run_rows_scalar_count(iter, op, count);
  return x;
}

}  // namespace cpu

}  // namespace torchops
