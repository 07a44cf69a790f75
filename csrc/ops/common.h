// Helpers shared by the CPU entry points: the dtypes a shift takes and their names for
// messages, and running a contiguous kernel over one strided row of a TensorIterator loop.
#pragma once

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace torchops {

// "float32", "int8", ... as Python prints them, for error messages.
inline std::string dtype_name(at::ScalarType dtype) {
  return std::string(c10::getDtypeNames(dtype).first);
}

inline bool is_unsigned_integer(at::ScalarType dtype) {
  return dtype == at::kByte || dtype == at::kUInt16 || dtype == at::kUInt32 || dtype == at::kUInt64;
}

// The dtypes a shift accepts: every signed and unsigned integer type, not bool (c10's
// integral types include uint16, uint32 and uint64).
inline bool is_shift_dtype(at::ScalarType dtype) {
  return at::isIntegralType(dtype, /*includeBool=*/false);
}
// The same dtypes as the messages list them (torchops/_contract.py's SHIFT_DTYPE_NAMES for
// the fake kernels and the typed API: the tests compare their messages with these).
constexpr const char* kShiftDtypeNames = "int8, int16, int32, int64, uint8, uint16, uint32, uint64";

// None passed for a Tensor argument through torch.ops arrives as an undefined tensor.
inline void check_defined(const char* op_name, const char* arg, const at::Tensor& tensor) {
  TORCH_CHECK_TYPE(tensor.defined(), op_name, ": ", arg, " must be a tensor, got None");
}

// PyTorch refuses to write an inference tensor outside torch.inference_mode(), but only
// after the write (its version counter is bumped last). Refusing before keeps it unchanged.
inline void check_writable(const char* op_name, const char* arg, const at::Tensor& tensor) {
  TORCH_CHECK(!tensor.is_inference() || c10::InferenceMode::is_enabled(), op_name, ": ", arg,
              " is an inference tensor, which cannot be written outside torch.inference_mode() (PyTorch's rule: "
              "'Inplace update to inference tensor outside InferenceMode is not allowed'); write into a clone");
}

// Builds a TensorIterator; its own refusals (memory overlap, mostly, which PyTorch reports
// as "unsupported operation: ...") get the op's name in front, as every other error of the
// op has it. The exception type is kept.
template <typename Build>
at::TensorIterator build_iter(const char* op_name, Build&& build) {
  try {
    return build();
  } catch (const c10::TypeError& e) {
    TORCH_CHECK_TYPE(false, op_name, ": ", e.what_without_backtrace());
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, op_name, ": ", e.what_without_backtrace());
  }
}

// Whether `out` may be written by a loop that skips TensorIterator: it may share memory
// with an input only by being it (in place, out=x), as TensorIterator allows; a partial
// (or undecidable) overlap is left to TensorIterator, which refuses it.
inline bool overlaps_at_most_fully(const at::Tensor& out, const at::Tensor& input) {
  const at::MemOverlapStatus status = at::get_overlap_status(out, input);
  return status == at::MemOverlapStatus::No || status == at::MemOverlapStatus::Full;
}

// One operand of one row of a TensorIterator loop.
struct RowOperand {
  char* data;
  int64_t stride;     // in bytes
  int64_t elem_size;  // in bytes
  bool contiguous() const { return stride == elem_size; }
};

namespace detail {
template <typename T>
void copy_strided(const char* src, int64_t src_stride, char* dst, int64_t dst_stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T value;
    std::memcpy(&value, src + i * src_stride, sizeof(T));
    std::memcpy(dst + i * dst_stride, &value, sizeof(T));
  }
}

inline void copy_elements(const char* src, int64_t src_stride, char* dst, int64_t dst_stride,
                          int64_t elem_size, int64_t n) {
  switch (elem_size) {
    case 1: return copy_strided<uint8_t>(src, src_stride, dst, dst_stride, n);
    case 2: return copy_strided<uint16_t>(src, src_stride, dst, dst_stride, n);
    case 4: return copy_strided<uint32_t>(src, src_stride, dst, dst_stride, n);
    case 8: return copy_strided<uint64_t>(src, src_stride, dst, dst_stride, n);
  }
  TORCH_INTERNAL_ASSERT(false, "torchops: no copy for elements of ", elem_size, " bytes");
}
}  // namespace detail

// Runs kernel(inputs, out, n), a loop over contiguous arrays, on a row whose operands
// may be strided. Strided operands go through small stack buffers, block by block, so
// the contiguous (vectorized) kernel does the work on every layout and the rules live
// only in the kernels. A block is read completely before it is written, which keeps an
// output that is exactly one of the inputs (in place) correct.
template <int NumInputs, typename Kernel>
void run_row(const Kernel& kernel, const RowOperand& out, const RowOperand (&inputs)[NumInputs], int64_t n) {
  const void* input_ptrs[NumInputs];
  bool all_contiguous = out.contiguous();
  for (int k = 0; k < NumInputs; ++k) all_contiguous = all_contiguous && inputs[k].contiguous();
  if (all_contiguous) {
    for (int k = 0; k < NumInputs; ++k) input_ptrs[k] = inputs[k].data;
    kernel(input_ptrs, static_cast<void*>(out.data), n);
    return;
  }
  constexpr int64_t kBlockBytes = 2048;  // 256 eight-byte elements: fits L1 with room to spare
  constexpr int64_t kBlock = kBlockBytes / 8;
  alignas(64) char input_buffers[NumInputs][kBlockBytes];
  alignas(64) char output_buffer[kBlockBytes];
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t len = std::min(kBlock, n - begin);
    for (int k = 0; k < NumInputs; ++k) {
      const RowOperand& in = inputs[k];
      const char* start = in.data + begin * in.stride;
      if (in.contiguous()) {
        input_ptrs[k] = start;
      } else {
        detail::copy_elements(start, in.stride, input_buffers[k], in.elem_size, in.elem_size, len);
        input_ptrs[k] = input_buffers[k];
      }
    }
    char* out_start = out.data + begin * out.stride;
    kernel(input_ptrs, static_cast<void*>(out.contiguous() ? out_start : output_buffer), len);
    if (!out.contiguous()) {
      detail::copy_elements(output_buffer, out.elem_size, out_start, out.stride, out.elem_size, len);
    }
  }
}

}  // namespace torchops
