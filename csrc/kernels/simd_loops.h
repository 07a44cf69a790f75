// The loops and the width / op dispatch shared by the SIMD levels. Included inside an ISA
// namespace (after kernels_impl.h), once that namespace has defined Vec, kVecBytes, load,
// store, bytes_of, shift_vec<Width, Op>(x, count) and
// shift_vec_by_scalar<Width, Op>(x, count, byte_mask); each level thus gets its own copy,
// compiled for its ISA. Includes nothing itself.

template <int Width, ShiftOp Op>
void shift_tensor_count(const void* x, const void* count, void* out, int64_t n) {
  run_steps([](const char* a, const char* c, char* o) {
    store(o, shift_vec<Width, Op>(load(a), load(c)));
    store(o + kVecBytes, shift_vec<Width, Op>(load(a + kVecBytes), load(c + kVecBytes)));
  }, 2 * kVecBytes / Width, Width, Width, x, count, out, n);
}

template <int Width, ShiftOp Op>
void shift_scalar_count(const void* x, unsigned c, void* out, int64_t n) {
  const __m128i count = _mm_cvtsi32_si128(static_cast<int>(c));
  // 8-bit lanes shift as 16-bit ones; byte_mask clears the bits that crossed into a
  // neighbour. Only they use it (and only their count is below 8, so 0xff << c is defined).
  uint8_t kept_bits = 0xff;
  if constexpr (Width == 1) kept_bits = Op == ShiftOp::Left ? static_cast<uint8_t>(0xffu << c) : static_cast<uint8_t>(0xffu >> c);
  const Vec byte_mask = bytes_of(kept_bits);
  run_steps([&](const char* a, const char*, char* o) {
    store(o, shift_vec_by_scalar<Width, Op>(load(a), count, byte_mask));
    store(o + kVecBytes, shift_vec_by_scalar<Width, Op>(load(a + kVecBytes), count, byte_mask));
  }, 2 * kVecBytes / Width, Width, Width, x, nullptr, out, n);
}

template <int Width>
void shift_width(ShiftOp op, const void* x, const void* count, void* out, int64_t n) {
  switch (op) {
    case ShiftOp::Left: return shift_tensor_count<Width, ShiftOp::Left>(x, count, out, n);
    case ShiftOp::RightLogical: return shift_tensor_count<Width, ShiftOp::RightLogical>(x, count, out, n);
    case ShiftOp::RightArithmetic: return shift_tensor_count<Width, ShiftOp::RightArithmetic>(x, count, out, n);
  }
}

template <int Width>
void shift_width_by_scalar(ShiftOp op, const void* x, unsigned c, void* out, int64_t n) {
  switch (op) {
    case ShiftOp::Left: return shift_scalar_count<Width, ShiftOp::Left>(x, c, out, n);
    case ShiftOp::RightLogical: return shift_scalar_count<Width, ShiftOp::RightLogical>(x, c, out, n);
    case ShiftOp::RightArithmetic: return shift_scalar_count<Width, ShiftOp::RightArithmetic>(x, c, out, n);
  }
}

void shift_simd(ShiftOp op, int width, const void* x, const void* count, void* out, int64_t n) {
  switch (width) {
    case 1: return shift_width<1>(op, x, count, out, n);
    case 2: return shift_width<2>(op, x, count, out, n);
    case 4: return shift_width<4>(op, x, count, out, n);
    case 8: return shift_width<8>(op, x, count, out, n);
  }
}

void shift_by_scalar_simd(ShiftOp op, int width, const void* x, uint64_t count, void* out, int64_t n) {
  if (settle_out_of_range_count(op, width, count, out, n)) return;
  const unsigned c = static_cast<unsigned>(count);
  switch (width) {
    case 1: return shift_width_by_scalar<1>(op, x, c, out, n);
    case 2: return shift_width_by_scalar<2>(op, x, c, out, n);
    case 4: return shift_width_by_scalar<4>(op, x, c, out, n);
    case 8: return shift_width_by_scalar<8>(op, x, c, out, n);
  }
}
