// The torchops C++ API: typed functions that call the torchops:: operators through
// PyTorch's dispatcher, as torch.ops.torchops.* does from Python. The rules (out-of-range
// counts, promotion, broadcasting, in-place and out=) are in docs/semantics.md; the errors
// are the same c10::Error subclasses (c10::TypeError, c10::ValueError) with the same words.
//
// With CMake (docs/deploy.md):
//   find_package(TorchOps REQUIRED)   # CMAKE_PREFIX_PATH: torchops.cmake_prefix_path
//   target_link_libraries(app TorchOps::torchops)
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <string_view>

#define TORCHOPS_API __attribute__((visibility("default")))

namespace torchops {

// x shifted by y bits, elementwise. direction: "LEFT" or "RIGHT" (or "left", "right").
// arithmetic=false makes a right shift of a signed type logical (zero-filling). x and y
// broadcast; the result has their promoted integer dtype.
TORCHOPS_API at::Tensor bitshift(const at::Tensor& x, const at::Tensor& y, std::string_view direction,
                                 bool arithmetic = true);
TORCHOPS_API at::Tensor bitshift(const at::Tensor& x, const at::Scalar& y, std::string_view direction,
                                 bool arithmetic = true);

// In place: shifts x and returns it. x's shape and dtype must hold the result.
TORCHOPS_API const at::Tensor& bitshift_(const at::Tensor& x, const at::Tensor& y, std::string_view direction,
                                         bool arithmetic = true);
TORCHOPS_API const at::Tensor& bitshift_(const at::Tensor& x, const at::Scalar& y, std::string_view direction,
                                         bool arithmetic = true);

// Into out (resized like ATen's *_out functions when empty or of another shape); returns out.
TORCHOPS_API const at::Tensor& bitshift_out(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y,
                                            std::string_view direction, bool arithmetic = true);
TORCHOPS_API const at::Tensor& bitshift_out(const at::Tensor& out, const at::Tensor& x, const at::Scalar& y,
                                            std::string_view direction, bool arithmetic = true);

// The sign bit of each element, as a bool tensor: the IEEE sign bit for floating types
// (so -0.0, -inf and negative NaNs give true), x < 0 for integers, false for bool.
TORCHOPS_API at::Tensor signbit(const at::Tensor& x);
TORCHOPS_API const at::Tensor& signbit_out(const at::Tensor& out, const at::Tensor& x);

// The number of 1 bits of each element's magnitude (|x|; for the minimum of a signed dtype,
// 2^(width-1): one bit), as a uint8 tensor, as NumPy's bitwise_count: for every integer dtype
// and bool (true: 1).
TORCHOPS_API at::Tensor bitwise_count(const at::Tensor& x);
TORCHOPS_API const at::Tensor& bitwise_count_out(const at::Tensor& out, const at::Tensor& x);

}  // namespace torchops
