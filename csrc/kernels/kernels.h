// The kernel layer: loops over contiguous arrays, one set per instruction-set level.
//
// The rules these loops implement are stated in docs/semantics.md; this header only
// records how the CPU entries (csrc/ops/) reduce them to a few cases:
//
//  * A shift only sees unsigned lanes of 1, 2, 4 or 8 bytes. Two's complement makes a
//    left shift and a logical right shift the same on signed and unsigned values, and a
//    negative count of a signed dtype, read as unsigned, is >= the width, so "negative or
//    >= width" is one comparison. Only the arithmetic right shift of a signed dtype needs
//    the sign, and it gets its own ShiftOp.
//  * signbit reads the top bit of the element: for IEEE floats that is the sign bit, for
//    signed integers it is `x < 0`. Unsigned and bool inputs never reach a kernel.
//  * bitwise_count counts the 1 bits of an integer's magnitude: for a signed dtype, |x| in
//    the unsigned type of the width (so the minimum, whose |x| is 2^(width-1), has one). Bool
//    inputs never reach a kernel.
//
// Files that implement a KernelTable are compiled with ISA-specific code generation, so
// they include nothing from PyTorch (an inline function emitted there with AVX-512
// instructions could be picked by the linker for every caller), define everything in a
// namespace named for the ISA, and hold no dynamic initializers (each table is `constinit`).
#pragma once

#include <cstdint>

namespace torchops {

enum class ShiftOp : uint8_t {
  Left,             // zero-fill from the right; count >= width gives 0
  RightLogical,     // zero-fill from the left; count >= width gives 0
  RightArithmetic,  // sign-fill from the left; count >= width gives the sign fill (0 or -1)
};

// The arrays of one kernel call: `rows` rows of `n` contiguous elements each; row r of an
// array starts r * its row stride bytes after its row 0 (a stride of 0 repeats row 0).
// A strided loop hands a kernel a whole block of rows at once, so a row costs the kernel a
// few instructions, not a call: short rows are common (a channels_last tensor shifted by a
// per-channel count has rows of one pixel's channels).
struct Rows {
  int64_t n;
  int64_t rows;
  int64_t x_stride;
  int64_t count_stride;  // shifts by a tensor count only
  int64_t out_stride;
};

// One slot of a KernelTable: a function pointer that cannot be left out. Aggregate
// initialization value-initializes a member that a table's braces leave out, and this type
// has no default constructor, so a level that misses a slot does not compile (a plain
// pointer would be left null, with only a warning). Called like the function.
template <typename Function>
struct Slot;

template <typename Result, typename... Args>
struct Slot<Result (*)(Args...)> {
  Slot() = delete;
  constexpr Slot(Result (*function)(Args...)) : function(function) {}  // implicit: a table is a brace list
  Result operator()(Args... args) const { return function(args...); }
  Result (*function)(Args...);
};

// How far apart the elements of a row are, per array, in bytes (0: one element repeated).
struct Steps {
  int64_t x;
  int64_t count;
  int64_t out;
};

// How a packing op lays its fields out (docs/semantics.md): `bits` (1, 2 or 4) bits a
// field, 8 / bits fields a byte, the first field of a byte in its most significant bits, or
// its least when `little`. Packing reads elements of `width` bytes, each field its low bits,
// or 1 for a nonzero element when `nonzero` (packbits); unpacking writes a field a byte,
// sign-extended from `bits` bits when `is_signed`.
struct PackFormat {
  int width;
  int bits;
  bool little;
  bool nonzero;
  bool is_signed;
};

// Rows of a pack: each row's `bytes` bytes are made of its `n` elements (n <= bytes * 8 /
// bits: the fields of the last byte past n are 0); rows x_stride and out_stride bytes apart.
struct PackRows {
  int64_t bytes;
  int64_t n;
  int64_t rows;
  int64_t x_stride;
  int64_t out_stride;
};

// Rows of an unpack: each row's `fields` fields (a byte each) are read from its bytes, the
// first `skip` fields of its first byte skipped (skip < 8 / bits); rows x_stride and
// out_stride bytes apart.
struct UnpackRows {
  int64_t fields;
  int skip;
  int64_t rows;
  int64_t x_stride;
  int64_t out_stride;
};

// A block of Hamming distances: out[i * out_stride + j] = the number of bits in which code i
// of `a` and code j of `b` differ, i < m, j < n. A code is `bytes` contiguous bytes; a's codes
// are a_stride bytes apart, b's b_stride, out's rows out_stride elements apart.
struct CodeBlock {
  const uint8_t* a;
  int64_t a_stride;
  int64_t m;
  const uint8_t* b;
  int64_t b_stride;
  int64_t n;
  int64_t bytes;
  int32_t* out;
  int64_t out_stride;
};

// `streaming`: the caller allows non-temporal stores for `out` (it is far larger than the
// last-level cache and overlaps no input); a level may ignore the hint.
// A shift by a count tensor (of x's width), a slot of two kinds below.
using ShiftByTensor = void (*)(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                               bool streaming);

struct KernelTable {
  // out[i] = shift(x[i], count[i]) on `width`-byte unsigned lanes; count has x's width.
  Slot<ShiftByTensor> shift;
  // out[i] = shift(x[i], count): one count for every element (count >= width: out of range).
  Slot<void (*)(ShiftOp op, int width, const void* x, uint64_t count, void* out, const Rows& rows,
                bool streaming)>
      shift_by_scalar;
  // out[i] = shift(x[i], count of the row): one count per row, the `width`-byte element at
  // count + r * rows.count_stride for row r (a count of shape (rows, 1)). Each row is shifted
  // as by shift_by_scalar, the count settled once per row, not once per element.
  Slot<ShiftByTensor> shift_by_row_count;
  // out[i] = top bit of the `width`-byte element x[i].
  Slot<void (*)(int width, const void* x, bool* out, const Rows& rows)> signbit;
  // out[i] = shift(x[i], count[i]) as by `shift`, read and written in place in rows whose
  // elements are `steps` apart (a transposed x, every other element).
  Slot<void (*)(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                const Steps& steps)>
      shift_strided;
  // Whether a shift by a count tensor whose operands are not contiguous along their rows (of
  // `width`-byte elements, `step` bytes apart at most) goes to shift_strided (true) or to
  // `shift` through contiguous copies (csrc/ops/common.h's tiles). Each level's rule is
  // measured (docs/performance.md): the copies pay where `shift` is a vector loop, and on a
  // transposed operand, whose tiles read each cache line once; they cost more than they save
  // where `shift` is a scalar loop (x86-64's portable level: SSE2 has no shift by a count per
  // lane), and on wide elements a short step apart, which the scalar loop reads in order.
  Slot<bool (*)(int width, int64_t step)> strided_shift_in_place;
  // out[i] = the number of 1 bits of the `width`-byte element x[i], read as unsigned, or of
  // its magnitude when `is_signed`; rows.x_stride and rows.out_stride apart.
  Slot<void (*)(int width, bool is_signed, const void* x, uint8_t* out, const Rows& rows)> bitwise_count;
  // Packs rows whose elements are contiguous (the packed dim is x's last).
  Slot<void (*)(const PackFormat& format, const void* x, uint8_t* out, const PackRows& rows)> pack;
  // out[t], t < n: the byte of the `fields` elements at x + (k * field_stride + t) * width,
  // k < fields: a packed dim that is not x's last, whose groups run across rows.
  Slot<void (*)(const PackFormat& format, const void* x, uint8_t* out, int64_t n, int64_t field_stride, int fields)>
      pack_columns;
  // Unpacks rows whose fields are contiguous.
  Slot<void (*)(const PackFormat& format, const uint8_t* x, uint8_t* out, const UnpackRows& rows)> unpack;
  // out[t] = field `field` (< 8 / bits) of the byte x[t], t < n.
  Slot<void (*)(const PackFormat& format, const uint8_t* x, uint8_t* out, int64_t n, int field)> unpack_columns;
  // The Hamming distances of a block of codes (hamming_distance, hamming_topk).
  Slot<void (*)(const CodeBlock& block)> hamming;
};

// One table per level (csrc/kernels/kernels_<level>.cpp); the x86 levels exist only on x86-64.
namespace default_isa {
extern const KernelTable kernel_table;
}
namespace avx2 {
extern const KernelTable kernel_table;
}
namespace avx512 {
extern const KernelTable kernel_table;
}
// The avx512 table with bitwise_count on AVX-512 VPOPCNTDQ and BITALG (kernels_avx512.cpp).
namespace avx512_bitalg {
extern const KernelTable kernel_table;
}

}  // namespace torchops
