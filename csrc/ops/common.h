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

// One operand of a TensorIterator 2-D loop: element i of row r is at
// data + r * outer + i * inner (strides in bytes, never negative).
struct LoopOperand {
  char* data;
  int64_t inner;
  int64_t outer;
  int64_t elem_size;
  bool rows_contiguous() const { return inner == elem_size; }
  char* at(int64_t row, int64_t i) const { return data + row * outer + i * inner; }
  LoopOperand from_row(int64_t row) const { return {at(row, 0), inner, outer, elem_size}; }
};

namespace detail {

// dst[k] = src[k * Stride], the stride in elements known to the compiler (so that it can
// vectorize the common "every other element" views), or given at run time (Stride 0).
template <typename T, int64_t Stride>
void copy_from_strided(const char* src, int64_t stride, char* dst, int64_t n) {
  const int64_t step = Stride != 0 ? Stride * int64_t(sizeof(T)) : stride;
  for (int64_t k = 0; k < n; ++k) std::memcpy(dst + k * sizeof(T), src + k * step, sizeof(T));
}

template <typename T>
void copy_to_strided(const char* src, char* dst, int64_t stride, int64_t n) {
  for (int64_t k = 0; k < n; ++k) std::memcpy(dst + k * stride, src + k * sizeof(T), sizeof(T));
}

// The `rows` x `cols` tile of `op` whose first element is `first`, copied into the
// contiguous rows of `tile` (`cols` elements apart), in the order that reads `op`'s memory
// closest to sequentially: down the columns when `op` is closer to contiguous along its
// rows (a transposed operand), else along each row.
template <typename T>
void gather(const LoopOperand& op, const char* first, int64_t rows, int64_t cols, char* tile) {
  const int64_t row_bytes = cols * int64_t(sizeof(T));
  if (op.inner == 0) {  // broadcast along the row: one value per row
    for (int64_t r = 0; r < rows; ++r) {
      T value;
      std::memcpy(&value, first + r * op.outer, sizeof(T));
      for (int64_t i = 0; i < cols; ++i) std::memcpy(tile + r * row_bytes + i * sizeof(T), &value, sizeof(T));
    }
  } else if (rows > 1 && op.outer < op.inner) {
    for (int64_t i = 0; i < cols; ++i) {
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(tile + r * row_bytes + i * sizeof(T), first + r * op.outer + i * op.inner, sizeof(T));
      }
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const char* src = first + r * op.outer;
      char* dst = tile + r * row_bytes;
      if (op.inner == 2 * int64_t(sizeof(T))) {
        copy_from_strided<T, 2>(src, op.inner, dst, cols);
      } else {
        copy_from_strided<T, 0>(src, op.inner, dst, cols);
      }
    }
  }
}

// The inverse of gather: `tile`'s rows written into `op`'s tile at `first`.
template <typename T>
void scatter(const char* tile, int64_t rows, int64_t cols, const LoopOperand op, char* first) {
  const int64_t row_bytes = cols * int64_t(sizeof(T));
  if (rows > 1 && op.outer < op.inner) {
    for (int64_t i = 0; i < cols; ++i) {
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(first + r * op.outer + i * op.inner, tile + r * row_bytes + i * sizeof(T), sizeof(T));
      }
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) copy_to_strided<T>(tile + r * row_bytes, first + r * op.outer, op.inner, cols);
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
// rows are (bytes), for `rows` rows of `n` contiguous elements.
template <int NumInputs>
struct Block {
  const void* inputs[NumInputs];
  int64_t input_strides[NumInputs];
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
// keeps an output that is exactly one of the inputs (in place) correct. Tiles span
// several rows when rows are short (the kernel then runs on one block of them), and 64
// bytes of rows when an operand is closer to contiguous along its rows than along them (a
// transposed operand): each of its cache lines is then read once, not once per row.
template <int NumInputs, typename Kernel>
void run_rows(const Kernel& kernel, const LoopOperand& out, const LoopOperand (&inputs)[NumInputs], int64_t n,
              int64_t rows, bool streaming) {
  Block<NumInputs> block;
  bool all_contiguous = out.rows_contiguous();
  for (int k = 0; k < NumInputs; ++k) all_contiguous = all_contiguous && inputs[k].rows_contiguous();
  if (all_contiguous) {
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
  constexpr int64_t kTileBytes = 4096;
  constexpr int64_t kLineBytes = 64;
  // A tile's shape: elements per operand tile by the widest element; rows by the operands
  // read across rows (the narrowest of them fills a cache line), or by how many short rows fit.
  int64_t widest = out.elem_size;
  int64_t across_elem = 0;
  const auto consider = [&](const LoopOperand& op) {
    widest = std::max(widest, op.elem_size);
    if (!op.rows_contiguous() && op.inner != 0 && op.outer < op.inner) {
      across_elem = across_elem == 0 ? op.elem_size : std::min(across_elem, op.elem_size);
    }
  };
  consider(out);
  for (int k = 0; k < NumInputs; ++k) consider(inputs[k]);
  const int64_t tile_elems = kTileBytes / widest;
  int64_t tile_rows = 1;
  int64_t tile_cols = std::min(n, tile_elems);
  if (across_elem != 0) {
    tile_rows = std::min(rows, kLineBytes / across_elem);
    tile_cols = std::min(n, tile_elems / tile_rows);
  } else if (tile_cols == n) {
    tile_rows = std::min(rows, tile_elems / n);
  }
  alignas(64) char input_tiles[NumInputs][kTileBytes];
  alignas(64) char out_tile[kTileBytes];
  block.streaming = false;
  for (int64_t r = 0; r < rows; r += tile_rows) {
    block.rows = std::min(tile_rows, rows - r);
    for (int64_t i = 0; i < n; i += tile_cols) {
      block.n = std::min(tile_cols, n - i);
      for (int k = 0; k < NumInputs; ++k) {
        const LoopOperand& in = inputs[k];
        char* first = in.at(r, i);
        if (in.rows_contiguous()) {
          block.inputs[k] = first;
          block.input_strides[k] = in.outer;
        } else {
          detail::by_elem_size(in.elem_size, [&](auto t) {
            detail::gather<decltype(t)>(in, first, block.rows, block.n, input_tiles[k]);
          });
          block.inputs[k] = input_tiles[k];
          block.input_strides[k] = block.n * in.elem_size;
        }
      }
      char* out_first = out.at(r, i);
      block.out = out.rows_contiguous() ? out_first : out_tile;
      block.out_stride = out.rows_contiguous() ? out.outer : block.n * out.elem_size;
      kernel(block);
      if (!out.rows_contiguous()) {
        detail::by_elem_size(out.elem_size, [&](auto t) {
          detail::scatter<decltype(t)>(out_tile, block.rows, block.n, out, out_first);
        });
      }
    }
  }
}

}  // namespace torchops
