// Portable loop bodies behind every KernelTable (see kernels.h for the rules they follow).
// Included by each ISA's kernel file inside that ISA's namespace, so each ISA gets its own
// copy compiled with its own code generation: the compiler vectorizes these loops for it.
// Must not be included outside such a namespace, and includes nothing itself.

template <typename U>
constexpr uint64_t kBits = 8 * sizeof(U);

// Widen the narrow lanes to unsigned int before shifting so that integer promotion never
// turns them into a signed int (where a shift into the sign bit would be undefined).
template <typename U>
using Promoted = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;

template <typename U>
inline U shift_left(U x, uint64_t count) {
  return count < kBits<U> ? static_cast<U>(static_cast<Promoted<U>>(x) << count) : U(0);
}

template <typename U>
inline U shift_right_logical(U x, uint64_t count) {
  return count < kBits<U> ? static_cast<U>(x >> count) : U(0);
}

// Sign fill: all ones when the top bit is set, else zero.
template <typename U>
inline U sign_fill(U x) {
  return static_cast<U>(U(0) - static_cast<U>(x >> (kBits<U> - 1)));
}

// Arithmetic shift on unsigned lanes, by a count in [0, width): flipping a negative value
// makes it non-negative, a logical shift of that fills with zeros, and flipping back turns
// them into ones.
template <typename U>
inline U shift_right_arithmetic_in_range(U x, uint64_t count) {
  const U fill = sign_fill(x);
  return static_cast<U>(static_cast<U>(x ^ fill) >> count) ^ fill;
}

// Any count: one >= width saturates at width - 1, which leaves exactly the sign fill.
template <typename U>
inline U shift_right_arithmetic(U x, uint64_t count) {
  return shift_right_arithmetic_in_range(x, count < kBits<U> ? count : kBits<U> - 1);
}

template <typename U>
void shift_lanes(ShiftOp op, const U* x, const U* count, U* out, int64_t n) {
  switch (op) {
    case ShiftOp::Left:
      for (int64_t i = 0; i < n; ++i) out[i] = shift_left(x[i], count[i]);
      return;
    case ShiftOp::RightLogical:
      for (int64_t i = 0; i < n; ++i) out[i] = shift_right_logical(x[i], count[i]);
      return;
    case ShiftOp::RightArithmetic:
      for (int64_t i = 0; i < n; ++i) out[i] = shift_right_arithmetic(x[i], count[i]);
      return;
  }
}

// A count that is out of range for every element is settled once, before any loop: the
// output is all zeros (left, logical right), or, for the arithmetic right shift, the count
// becomes width - 1, which leaves exactly the sign fill. Returns true when `out` is done;
// otherwise `count` is in range for the loops that follow (a shift by one broadcast count).
inline bool settle_out_of_range_count(ShiftOp op, int width, uint64_t& count, void* out, int64_t n) {
  const uint64_t bits = 8 * static_cast<uint64_t>(width);
  if (count < bits) return false;
  if (op == ShiftOp::RightArithmetic) {
    count = bits - 1;
    return false;
  }
  std::memset(out, 0, static_cast<size_t>(n) * width);
  return true;
}

template <typename U>
void shift_lanes_by_scalar(ShiftOp op, const U* x, unsigned c, U* out, int64_t n) {
  switch (op) {
    case ShiftOp::Left:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<U>(static_cast<Promoted<U>>(x[i]) << c);
      return;
    case ShiftOp::RightLogical:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<U>(x[i] >> c);
      return;
    case ShiftOp::RightArithmetic:
      for (int64_t i = 0; i < n; ++i) out[i] = shift_right_arithmetic_in_range(x[i], c);
      return;
  }
}

template <typename U>
void signbit_lanes(const U* x, bool* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<bool>(x[i] >> (kBits<U> - 1));
}

// Width dispatch: the table entries take untyped pointers and a lane width in bytes.
// The portable loops leave `streaming` to the compiler: it has no portable spelling.
inline void shift(ShiftOp op, int width, const void* x, const void* count, void* out, int64_t n,
                  bool /*streaming*/) {
  switch (width) {
    case 1: return shift_lanes(op, static_cast<const uint8_t*>(x), static_cast<const uint8_t*>(count), static_cast<uint8_t*>(out), n);
    case 2: return shift_lanes(op, static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(count), static_cast<uint16_t*>(out), n);
    case 4: return shift_lanes(op, static_cast<const uint32_t*>(x), static_cast<const uint32_t*>(count), static_cast<uint32_t*>(out), n);
    case 8: return shift_lanes(op, static_cast<const uint64_t*>(x), static_cast<const uint64_t*>(count), static_cast<uint64_t*>(out), n);
  }
}

inline void shift_by_scalar(ShiftOp op, int width, const void* x, uint64_t count, void* out, int64_t n,
                            bool /*streaming*/) {
  if (settle_out_of_range_count(op, width, count, out, n)) return;
  const unsigned c = static_cast<unsigned>(count);
  switch (width) {
    case 1: return shift_lanes_by_scalar(op, static_cast<const uint8_t*>(x), c, static_cast<uint8_t*>(out), n);
    case 2: return shift_lanes_by_scalar(op, static_cast<const uint16_t*>(x), c, static_cast<uint16_t*>(out), n);
    case 4: return shift_lanes_by_scalar(op, static_cast<const uint32_t*>(x), c, static_cast<uint32_t*>(out), n);
    case 8: return shift_lanes_by_scalar(op, static_cast<const uint64_t*>(x), c, static_cast<uint64_t*>(out), n);
  }
}

inline void signbit(int width, const void* x, bool* out, int64_t n) {
  switch (width) {
    case 1: return signbit_lanes(static_cast<const uint8_t*>(x), out, n);
    case 2: return signbit_lanes(static_cast<const uint16_t*>(x), out, n);
    case 4: return signbit_lanes(static_cast<const uint32_t*>(x), out, n);
    case 8: return signbit_lanes(static_cast<const uint64_t*>(x), out, n);
  }
}
