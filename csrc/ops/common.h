// Helpers shared by the CPU entries: the direct path's overlap rule and running the
// contiguous kernels over the strided rows of a TensorIterator loop (run_rows). The
// argument checks, which every backend's entries share: csrc/ops/checks.h.
#pragma once

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include "ops/checks.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace torchops {

// Whether `out` may be written by a loop that skips TensorIterator: it may share memory
// with an input only by being it (in place, out=x), as TensorIterator allows; a partial
// (or undecidable) overlap is left to TensorIterator, which refuses it.
inline bool overlaps_at_most_fully(const at::Tensor& out, const at::Tensor& input) {
  const at::MemOverlapStatus status = at::get_overlap_status(out, input);
  return status == at::MemOverlapStatus::No || status == at::MemOverlapStatus::Full;
}

// One operand of a TensorIterator 2-D loop: element i of row r is at
// data + r * outer + i * inner (strides in bytes, never negative).
struct LoopOperand {
  char* data;
  int64_t inner;
  int64_t outer;
  int64_t elem_size;
  bool rows_contiguous() const { return inner == elem_size; }
  char* at(int64_t row, int64_t i) const { return data + row * outer + i * inner; }
};

namespace detail {

// dst[k * dst_stride] = src[k * src_stride] for k < n (strides in bytes).
template <typename T>
void copy_elements(const char* src, int64_t src_stride, char* dst, int64_t dst_stride, int64_t n) {
  // Unrolled: a load and a store an element, where the loop's own instructions would double it.
#pragma GCC unroll 4
  for (int64_t k = 0; k < n; ++k) std::memcpy(dst + k * dst_stride, src + k * src_stride, sizeof(T));
}

// The same into a contiguous dst, from a src `Stride` elements apart: a stride the compiler
// knows, so that it vectorizes the copy of the common "every other element" views.
template <typename T, int64_t Stride>
void copy_from_every(const char* src, char* dst, int64_t n) {
  // Unrolled, as copy_elements is.
#pragma GCC unroll 4
  for (int64_t k = 0; k < n; ++k) std::memcpy(dst + k * sizeof(T), src + k * Stride * sizeof(T), sizeof(T));
}

// The `rows` x `cols` tile of `op` whose first element is `first`, copied into the
// contiguous rows of `tile` (`cols` elements apart), in the order that reads `op`'s memory
// closest to sequentially: down the columns when `op` is closer to contiguous along its
// columns than along its rows (a transposed operand), else along each row. Everything is
// passed by value: the copies' byte stores could alias a reference's fields, and the
// compiler would reload them after every element.
template <typename T>
void gather(const LoopOperand op, const char* first, int64_t rows, int64_t cols, char* tile) {
  const int64_t size = sizeof(T);
  const int64_t row_bytes = cols * size;
  if (op.inner == 0) {  // broadcast along the row: one value per row
    for (int64_t r = 0; r < rows; ++r) copy_elements<T>(first + r * op.outer, 0, tile + r * row_bytes, size, cols);
  } else if (op.inner == size && op.outer == 0) {  // one row repeated: copied once, then doubled
    std::memcpy(tile, first, row_bytes);
    for (int64_t done = 1; done < rows; done *= 2) {
      std::memcpy(tile + done * row_bytes, tile, std::min(done, rows - done) * row_bytes);
    }
  } else if (op.inner == size) {  // contiguous rows
    for (int64_t r = 0; r < rows; ++r) std::memcpy(tile + r * row_bytes, first + r * op.outer, row_bytes);
  } else if (rows > 1 && op.outer < op.inner) {
    for (int64_t i = 0; i < cols; ++i) copy_elements<T>(first + i * op.inner, op.outer, tile + i * size, row_bytes, rows);
  } else if (op.inner == 2 * size) {
    for (int64_t r = 0; r < rows; ++r) copy_from_every<T, 2>(first + r * op.outer, tile + r * row_bytes, cols);
  } else {
    for (int64_t r = 0; r < rows; ++r) copy_elements<T>(first + r * op.outer, op.inner, tile + r * row_bytes, size, cols);
  }
}

// The inverse of gather: `tile`'s rows written into `op`'s tile at `first`.
template <typename T>
void scatter(const char* tile, int64_t rows, int64_t cols, const LoopOperand op, char* first) {
  const int64_t size = sizeof(T);
  const int64_t row_bytes = cols * size;
  if (rows > 1 && op.outer < op.inner) {
    for (int64_t i = 0; i < cols; ++i) copy_elements<T>(tile + i * size, row_bytes, first + i * op.inner, op.outer, rows);
  } else {
    for (int64_t r = 0; r < rows; ++r) copy_elements<T>(tile + r * row_bytes, size, first + r * op.outer, op.inner, cols);
  }
}

template <typename Function>
void by_elem_size(int64_t elem_size, const Function& function) {
  switch (elem_size) {
    case 1: return function(uint8_t{});
    case 2: return function(uint16_t{});
    case 4: return function(uint32_t{});
    case 8: return function(uint64_t{});
  }
  TORCH_INTERNAL_ASSERT(false, "torchops: no copy for elements of ", elem_size, " bytes");
}

}  // namespace detail

// What run_rows hands its kernel: where each operand's block starts and how far apart its
// rows are (bytes), for `rows` rows of `n` contiguous elements, except that an input marked
// one_per_row holds one element per row (broadcast along the row: a count of shape (rows, 1)).
template <int NumInputs>
struct Block {
  const void* inputs[NumInputs];
  int64_t input_strides[NumInputs];
  bool one_per_row[NumInputs];
  void* out;
  int64_t out_stride;
  int64_t n;
  int64_t rows;
  bool streaming;  // the caller's `streaming`, or false for a block that goes through tiles
};

// Runs kernel(block), a loop over rows of contiguous elements, on the n x rows elements of
// one TensorIterator 2-D loop, whatever the operands' strides, so the contiguous
// (vectorized) kernels do the work on every layout and the rules live only in them.
//
// Operands whose rows are contiguous are handed over in place, with their row strides (0
// for a row repeated: a broadcast count). Any other operand goes through small tiles on
// the stack: a tile of one operand is read completely before the kernel writes, which
// keeps an output that is exactly one of the inputs (in place) correct. A tile spans 64
// bytes of rows when an operand is closer to contiguous down its columns than along its
// rows (a transposed operand: each of its cache lines is then read once, not once per
// row). Short rows (a channels_last image's pixels, a count per row of a few elements) are
// merged: the tile's rows become one row for the kernel, whose cost per row (a partial
// vector step) would otherwise dominate; an operand then goes in place only if its rows
// follow each other in memory, and a row repeated (a count per column) is copied once.
//
// Bit k of `per_row_inputs` says the kernel also takes input k as one element per row: an
// input broadcast along unmerged rows (inner stride 0) then goes in place, read once per row
// by the kernel instead of being repeated along each row of a tile.
template <int NumInputs, typename Kernel>
void run_rows(const Kernel& kernel, const LoopOperand& out, const LoopOperand (&inputs)[NumInputs], int64_t n,
              int64_t rows, bool streaming, unsigned per_row_inputs = 0) {
  constexpr int64_t kTileBytes = 4096;
  constexpr int64_t kLineBytes = 64;
  constexpr int64_t kShortRowBytes = 256;  // a few vector steps
  int64_t widest = out.elem_size;
  for (int k = 0; k < NumInputs; ++k) widest = std::max(widest, inputs[k].elem_size);
  // Rows shorter than this are merged in tiles (below), where a count per row cannot stay one.
  const bool long_rows = n * widest >= kShortRowBytes;
  bool one_per_row[NumInputs];
  for (int k = 0; k < NumInputs; ++k) one_per_row[k] = (per_row_inputs >> k & 1u) && inputs[k].inner == 0 && long_rows;
  bool all_contiguous = out.rows_contiguous();
  int64_t across_elem = 0;  // the narrowest element of the operands read down the columns
  const auto consider = [&](const LoopOperand& op, bool in_place_anyway) {
    all_contiguous = all_contiguous && (op.rows_contiguous() || in_place_anyway);
    if (!op.rows_contiguous() && op.inner != 0 && op.outer < op.inner) {
      across_elem = across_elem == 0 ? op.elem_size : std::min(across_elem, op.elem_size);
    }
  };
  consider(out, false);
  for (int k = 0; k < NumInputs; ++k) consider(inputs[k], one_per_row[k]);

  Block<NumInputs> block;
  for (int k = 0; k < NumInputs; ++k) block.one_per_row[k] = one_per_row[k];
  if (all_contiguous && (rows == 1 || long_rows)) {
    for (int k = 0; k < NumInputs; ++k) {
      block.inputs[k] = inputs[k].data;
      block.input_strides[k] = inputs[k].outer;
    }
    block.out = out.data;
    block.out_stride = out.outer;
    block.n = n;
    block.rows = rows;
    block.streaming = streaming;
    kernel(block);
    return;
  }

  // The tile: elements per operand by the widest element; rows by the operands read down
  // the columns (the narrowest of them fills a cache line), or by how many rows fit.
  const int64_t tile_elems = kTileBytes / widest;
  int64_t tile_rows = 1;
  int64_t tile_cols = std::min(n, tile_elems);
  if (across_elem != 0) {
    tile_rows = std::min(rows, kLineBytes / across_elem);
    tile_cols = std::min(n, tile_elems / tile_rows);
  } else if (tile_cols == n) {
    tile_rows = std::min(rows, tile_elems / n);
  }
  const bool merge = tile_cols == n && !long_rows;
  const auto in_place = [&](const LoopOperand& op) {
    return op.rows_contiguous() && (!merge || op.outer == n * op.elem_size);
  };
  alignas(64) char input_tiles[NumInputs][kTileBytes];
  alignas(64) char out_tile[kTileBytes];
  block.streaming = false;
  for (int64_t r = 0; r < rows; r += tile_rows) {
    const int64_t this_rows = std::min(tile_rows, rows - r);
    for (int64_t i = 0; i < n; i += tile_cols) {
      const int64_t this_cols = std::min(tile_cols, n - i);
      for (int k = 0; k < NumInputs; ++k) {
        const LoopOperand& in = inputs[k];
        char* first = in.at(r, i);
        if (one_per_row[k] || in_place(in)) {
          block.inputs[k] = first;
          block.input_strides[k] = in.outer;
          continue;
        }
        // A row repeated (row stride 0) fills every tile alike: copied for the first only.
        if (r == 0 || in.outer != 0 || !merge) {
          detail::by_elem_size(in.elem_size, [&](auto t) {
            detail::gather<decltype(t)>(in, first, this_rows, this_cols, input_tiles[k]);
          });
        }
        block.inputs[k] = input_tiles[k];
        block.input_strides[k] = this_cols * in.elem_size;
      }
      char* out_first = out.at(r, i);
      block.out = in_place(out) ? out_first : out_tile;
      block.out_stride = in_place(out) ? out.outer : this_cols * out.elem_size;
      block.n = merge ? this_rows * n : this_cols;
      block.rows = merge ? 1 : this_rows;
      kernel(block);
      if (!in_place(out)) {
        detail::by_elem_size(out.elem_size, [&](auto t) {
          detail::scatter<decltype(t)>(out_tile, this_rows, this_cols, out, out_first);
        });
      }
    }
  }
}

}  // namespace torchops
