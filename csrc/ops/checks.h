// The argument checks of the ops, shared by the entries of every backend: the CPU entries
// (csrc/ops/bitshift.cpp, unary.cpp) and the device-generic ones (csrc/ops/composite.cpp,
// unary.cpp) run the same checks in the same order, so a bad call gives the same error on every
// device. torchops/_contract.py repeats them in the same words for the fake kernels
// (tests/test_torch_integration.py compares).
#pragma once

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"

namespace torchops {

// The counts an op takes besides a tensor y: what shift_result_type's error can advise.
enum class OtherCounts { none, python_int };

// The ops as every message names them.
constexpr const char* kBitshiftOp = "torchops.bitshift";
constexpr const char* kBitshiftInplaceOp = "torchops.bitshift_";
// bitshift's count is a tensor or a Python int (its .Scalar overloads).
constexpr OtherCounts kBitshiftOtherCounts = OtherCounts::python_int;
constexpr const char* kSignbitOp = "torchops.signbit";

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

// A tensor argument, by the name messages give it.
using NamedTensor = std::pair<const char*, const at::Tensor*>;

// What a call that fails after (or while) resizing an out= tensor can have changed of it: its
// sizes, strides and offset. ATen's resize allocates the new storage before it lets go of
// the old one, and copies the old bytes into it, so a failed allocation leaves the old data
// under the new sizes (a tensor that cannot even be printed) and nothing else.
struct OutGeometry {
  explicit OutGeometry(const at::Tensor& out);
  bool defined;
  c10::DimVector sizes, strides;
  int64_t offset;
};

// Puts each of `outs` back to its geometry `before` where it changed; when one was left
// with sizes its storage cannot hold (its resize could not allocate), throws the op's
// OutOfMemoryError naming that argument, the shape and the bytes it needed, then `error`'s
// words (the allocator's). Otherwise returns, for the caller to rethrow `error`.
void restore_outs(const char* op_name, std::initializer_list<NamedTensor> outs, const std::vector<OutGeometry>& before,
                  const std::exception& error);

// Runs `body`, which may resize the out= tensors `outs` and then fail: a failed call leaves
// every out as it was (restore_outs), an allocation that failed reported by name.
template <typename Body>
decltype(auto) restoring_outs(const char* op_name, std::initializer_list<NamedTensor> outs, Body&& body) {
  std::vector<OutGeometry> before;
  for (const NamedTensor& out : outs) before.emplace_back(*out.second);
  try {
    return body();
  } catch (const std::exception& error) {
    restore_outs(op_name, outs, before, error);
    throw;
  }
}

// A new result of `shape`, or the op's OutOfMemoryError naming its shape and bytes (the
// allocator's own words name neither the op nor the shape).
at::Tensor empty_result(const char* op_name, at::IntArrayRef shape, const at::TensorOptions& options);

// Builds a TensorIterator whose output is `out` (undefined: a new result); its own refusals
// (memory overlap, mostly, which PyTorch reports as "unsupported operation: ...") get the
// op's name in front, as every other error of the op has it, the exception type kept. An out
// the iterator resized is restored when the build fails (restore_outs).
template <typename Build>
at::TensorIterator build_iter(const char* op_name, const at::Tensor& out, Build&& build) {
  const std::vector<OutGeometry> before{OutGeometry(out)};
  try {
    return build();
  } catch (const c10::Error& e) {
    restore_outs(op_name, {{"out", &out}}, before, e);
    TORCH_CHECK_TYPE(dynamic_cast<const c10::TypeError*>(&e) == nullptr, op_name, ": ", e.what_without_backtrace());
    TORCH_CHECK(false, op_name, ": ", e.what_without_backtrace());
  }
}

// Only strided (dense) tensors. The CPU kernels never see another layout: a sparse or
// other tensor has a dispatch key of its own, which the device-generic entries serve, and
// they refuse it with this check, in the typed API's words (torchops/_twins.py).
void check_strided(const char* op_name, std::initializer_list<NamedTensor> tensors);

// Every tensor on x's device, in the fake kernels' words. A CPU kernel only ever sees CPU
// tensors; a call that mixes devices reaches the kernel of the highest one (CUDA before
// CPU), which is device-generic.
void check_same_device(const char* op_name, const at::Tensor& x, std::initializer_list<NamedTensor> others);
// The same, for an op whose first tensor is not named x.
void check_same_device(const char* op_name, NamedTensor first, std::initializer_list<NamedTensor> others);

// For an op whose output elements are made of other elements than their own (packing,
// search): no overlap of out with itself or with any input, not even a full one. PyTorch's
// refusals, with the op's name in front, as every other error of the op.
void check_no_overlap(const char* op_name, const at::Tensor& out, std::initializer_list<const at::Tensor*> inputs);

// x or y of a shift: defined, of an integer dtype.
void check_shift_tensor(const char* op_name, const char* arg, const at::Tensor& tensor);

// Which shift `direction` and `arithmetic` ask for, on values of `dtype`.
ShiftOp parse_shift_op(const char* op_name, c10::string_view direction, bool arithmetic, at::ScalarType dtype);

// torch.result_type(x, y), with the operands' dtypes checked and a promotion PyTorch
// refuses (uint16/32/64 with another integer type) reported as a TypeError of this op that
// says how to make the call work, with only the forms the op has (`other_counts`).
at::ScalarType shift_result_type(const char* op_name, const at::Tensor& x, const at::Tensor& y,
                                 OtherCounts other_counts);

// The shape x and y broadcast to, or an error naming both shapes; a result of that shape and
// `result_dtype` must fit (check_result_size).
at::DimVector broadcast_shape(const char* op_name, const at::Tensor& x, const at::Tensor& y,
                              at::ScalarType result_dtype);

// A result of `shape` and `dtype` whose element count or size in bytes exceeds int64 is
// refused before anything is allocated or resized (ATen's allocator would say only "integer
// multiplication overflow", after an out= was resized to it). `source` says what set the
// shape ("count 4611686018427387904", "x of shape [...] and y of shape [...]").
void check_result_size(const char* op_name, const std::string& source, at::IntArrayRef shape, at::ScalarType dtype);

// out= is defined and has the result's dtype (out= never converts).
void check_out_dtype(const char* op_name, const at::Tensor& out, at::ScalarType result_dtype);

// An in-place shift keeps x's dtype and shape.
void check_inplace_dtype(at::ScalarType result_dtype, const at::Tensor& x, const at::Tensor& y);
void check_inplace_shape(at::IntArrayRef result_shape, const at::Tensor& x);

// A Python-int count is taken by its value, never wrapped into x's dtype. Every negative
// value maps to the largest uint64, so that one `count >= width` test covers both ends.
uint64_t scalar_count(const char* op_name, const at::Scalar& y);

// IEEE floats and signed integers keep their sign in the top bit of the element.
bool sign_in_top_bit(at::ScalarType dtype);

// The x of a unary op (csrc/ops/unary.h), named `op_name`: defined, and of a dtype it takes.
// signbit's: a dtype that has a sign bit (or none: unsigned, bool).
void check_signbit_input(const char* op_name, const at::Tensor& x);
// An integer or bool dtype (bitwise_count's).
void check_integer_or_bool_input(const char* op_name, const at::Tensor& x);

}  // namespace torchops
