// The torchops C++ API: typed functions that call the torchops:: operators through
// PyTorch's dispatcher, as torch.ops.torchops.* does from Python. The rules (out-of-range
// counts, promotion, broadcasting, in-place and out=, bit packing) are in docs/semantics.md; the errors
// are the same c10::Error subclasses (c10::TypeError, c10::ValueError) with the same words.
//
// With CMake (docs/deploy.md):
//   find_package(TorchOps REQUIRED)   # CMAKE_PREFIX_PATH: torchops.cmake_prefix_path
//   target_link_libraries(app TorchOps::torchops)
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <cstdint>
#include <optional>
#include <tuple>
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

// Bit packing along one dim, as NumPy's packbits and unpackbits, and 2- and 4-bit fields
// (docs/semantics.md). dim: -1 by default (NumPy's axis defaults to flattening: pass
// std::nullopt for that); a 0-d x is one element. bitorder: "big" (the first element in the
// most significant bits of its byte) or "little". The results are contiguous.

// Each group of 8 elements along dim as one byte, a bit per element: 1 where it is nonzero. x:
// an integer or bool tensor; the result is uint8, of size ceil(n / 8) at dim, zero-padded.
TORCHOPS_API at::Tensor packbits(const at::Tensor& x, std::optional<int64_t> dim = -1,
                                 std::string_view bitorder = "big");
TORCHOPS_API const at::Tensor& packbits_out(const at::Tensor& out, const at::Tensor& x,
                                            std::optional<int64_t> dim = -1, std::string_view bitorder = "big");

// Each byte of x (uint8) along dim as 8 elements, 0 or 1. count: std::nullopt for all 8 *
// nbytes; count >= 0 for exactly count (past the end: 0); count < 0 for 8 * nbytes + count.
TORCHOPS_API at::Tensor unpackbits(const at::Tensor& x, std::optional<int64_t> dim = -1,
                                   std::optional<int64_t> count = std::nullopt, std::string_view bitorder = "big");
TORCHOPS_API const at::Tensor& unpackbits_out(const at::Tensor& out, const at::Tensor& x,
                                              std::optional<int64_t> dim = -1,
                                              std::optional<int64_t> count = std::nullopt,
                                              std::string_view bitorder = "big");

// The low `bits` bits (1, 2 or 4; two's complement for negative values) of each element of x
// (an integer or bool tensor), 8 / bits consecutive elements along dim to a uint8 byte.
TORCHOPS_API at::Tensor pack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim = -1,
                             std::string_view bitorder = "big");
TORCHOPS_API const at::Tensor& pack_out(const at::Tensor& out, const at::Tensor& x, int64_t bits,
                                        std::optional<int64_t> dim = -1, std::string_view bitorder = "big");

// Each byte of x (uint8) along dim as 8 / bits fields of `bits` bits: uint8, or int8
// sign-extended from `bits` bits when is_signed (the schema's `signed`, a C++ keyword). count:
// as unpackbits's, in fields.
TORCHOPS_API at::Tensor unpack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim = -1,
                               std::optional<int64_t> count = std::nullopt, std::string_view bitorder = "big",
                               bool is_signed = false);
TORCHOPS_API const at::Tensor& unpack_out(const at::Tensor& out, const at::Tensor& x, int64_t bits,
                                          std::optional<int64_t> dim = -1,
                                          std::optional<int64_t> count = std::nullopt,
                                          std::string_view bitorder = "big", bool is_signed = false);

// Binary-embedding search (docs/semantics.md): codes are uint8 or int8 rows of B bytes (a
// packed bit vector each, as packbits makes them); the distance of two codes is the number
// of bits in which they differ.

// x1 (..., M, B) and x2 (..., N, B), batch dims broadcast: the int32 (..., M, N) distances of
// every pair of rows, as torch.cdist's shape.
TORCHOPS_API at::Tensor hamming_distance(const at::Tensor& x1, const at::Tensor& x2);
TORCHOPS_API const at::Tensor& hamming_distance_out(const at::Tensor& out, const at::Tensor& x1,
                                                    const at::Tensor& x2);

// queries (Q, B) and database (N, B), 0 <= k <= N: each query's k nearest codes, as torch.topk
// returns them (values: int32 distances (Q, k); indices: int64 rows of the database (Q, k)),
// nearest first, the smaller index first among equal distances. No (Q, N) matrix is made.
TORCHOPS_API std::tuple<at::Tensor, at::Tensor> hamming_topk(const at::Tensor& queries, const at::Tensor& database,
                                                             int64_t k);
TORCHOPS_API std::tuple<const at::Tensor&, const at::Tensor&> hamming_topk_out(const at::Tensor& values,
                                                                               const at::Tensor& indices,
                                                                               const at::Tensor& queries,
                                                                               const at::Tensor& database,
                                                                               int64_t k);

}  // namespace torchops
