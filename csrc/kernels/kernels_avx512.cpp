// The AVX-512 level (F + BW + VL + DQ, 512-bit vectors). Everything below the pragma is
// compiled for AVX-512 and lives in namespace avx512; the dispatcher only picks this table
// on a CPU (and OS) that runs it. The rules: kernels.h and docs/semantics.md.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's AVX-512 headers seed results with a self-initialized "undefined" vector, which
// -Wmaybe-uninitialized (and, once the loops are inlined, -Wuninitialized) reports at every
// use; the value is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace torchops {
namespace avx512 {

#include "kernels/kernels_impl.h"

using Vec = __m512i;
constexpr int64_t kVecBytes = 64;

inline Vec load(const char* p) { return _mm512_loadu_si512(p); }
inline void store(char* p, Vec v) { _mm512_storeu_si512(p, v); }
inline void stream(char* p, Vec v) { _mm512_stream_si512(reinterpret_cast<Vec*>(p), v); }
inline void fence_streaming_stores() { _mm_sfence(); }
// The shifts by one count (vpsllw/d/q and kin) read it from the low 64 bits of an XMM register.
using Count = __m128i;
inline Count count_of(unsigned c) { return _mm_cvtsi32_si128(static_cast<int>(c)); }
inline Vec bytes_of(uint8_t b) { return _mm512_set1_epi8(static_cast<char>(b)); }

// ---- Shifts by a count per lane -------------------------------------------------------
// vpsllv/vpsrlv (w, d, q) read the count as unsigned and give 0 from the width up, and
// vpsrav sign-fills from the width up: exactly the contract, negative counts included
// (they read as huge). Only 8-bit lanes are emulated; tests compare every level with the
// portable one.

// 8-bit lanes through the 16-bit shifts: the low byte of each word is shifted alone
// (count & 0xff), the high byte in place (count >> 8), and a blend keeps the byte that
// belongs to each. A count >= 8 moves every bit out of its byte, so the kept byte is 0.
template <bool Left>
inline Vec shift_8(Vec x, Vec c) {
  const Vec low = _mm512_set1_epi16(0xff);
  const Vec x_lo = _mm512_and_si512(x, low), c_lo = _mm512_and_si512(c, low);
  const Vec x_hi = _mm512_andnot_si512(low, x), c_hi = _mm512_srli_epi16(c, 8);
  const Vec lo = Left ? _mm512_sllv_epi16(x_lo, c_lo) : _mm512_srlv_epi16(x_lo, c_lo);
  const Vec hi = Left ? _mm512_sllv_epi16(x_hi, c_hi) : _mm512_srlv_epi16(x_hi, c_hi);
  return _mm512_mask_blend_epi8(0x5555555555555555ull, hi, lo);
}

inline Vec sign_fill_8(Vec x) { return _mm512_movm_epi8(_mm512_movepi8_mask(x)); }

template <int Width, ShiftOp Op>
inline Vec shift_vec(Vec x, Vec c) {
  if constexpr (Op == ShiftOp::Left) {
    if constexpr (Width == 1) return shift_8<true>(x, c);
    if constexpr (Width == 2) return _mm512_sllv_epi16(x, c);
    if constexpr (Width == 4) return _mm512_sllv_epi32(x, c);
    if constexpr (Width == 8) return _mm512_sllv_epi64(x, c);
  } else if constexpr (Op == ShiftOp::RightLogical) {
    if constexpr (Width == 1) return shift_8<false>(x, c);
    if constexpr (Width == 2) return _mm512_srlv_epi16(x, c);
    if constexpr (Width == 4) return _mm512_srlv_epi32(x, c);
    if constexpr (Width == 8) return _mm512_srlv_epi64(x, c);
  } else {
    if constexpr (Width == 1) {
      // Flipped by its sign fill, shifted logically, flipped back: the sign fills from the left.
      const Vec fill = sign_fill_8(x);
      return _mm512_xor_si512(shift_8<false>(_mm512_xor_si512(x, fill), c), fill);
    }
    if constexpr (Width == 2) return _mm512_srav_epi16(x, c);
    if constexpr (Width == 4) return _mm512_srav_epi32(x, c);
    if constexpr (Width == 8) return _mm512_srav_epi64(x, c);
  }
}

// ---- Shifts by one count for every lane (in range: settled by the caller) --------------
template <int Width, ShiftOp Op>
inline Vec shift_vec_by_scalar(Vec x, Count count, Vec byte_mask) {
  if constexpr (Op == ShiftOp::Left) {
    // 8-bit lanes shift as 16-bit ones; the mask clears the bits that crossed into a neighbour.
    if constexpr (Width == 1) return _mm512_and_si512(_mm512_sll_epi16(x, count), byte_mask);
    if constexpr (Width == 2) return _mm512_sll_epi16(x, count);
    if constexpr (Width == 4) return _mm512_sll_epi32(x, count);
    if constexpr (Width == 8) return _mm512_sll_epi64(x, count);
  } else if constexpr (Op == ShiftOp::RightLogical) {
    if constexpr (Width == 1) return _mm512_and_si512(_mm512_srl_epi16(x, count), byte_mask);
    if constexpr (Width == 2) return _mm512_srl_epi16(x, count);
    if constexpr (Width == 4) return _mm512_srl_epi32(x, count);
    if constexpr (Width == 8) return _mm512_srl_epi64(x, count);
  } else {
    if constexpr (Width == 1) {
      const Vec fill = sign_fill_8(x);
      const Vec flipped = _mm512_xor_si512(x, fill);
      return _mm512_xor_si512(_mm512_and_si512(_mm512_srl_epi16(flipped, count), byte_mask), fill);
    }
    if constexpr (Width == 2) return _mm512_sra_epi16(x, count);
    if constexpr (Width == 4) return _mm512_sra_epi32(x, count);
    if constexpr (Width == 8) return _mm512_sra_epi64(x, count);
  }
}

#include "kernels/simd_loops.h"

// ---- signbit: vpmov*2m collects the top bit of each lane into a mask register, and a
// masked move turns the mask into bytes of 0 / 1. One step reads 64 bytes of input.
void signbit_avx512(int width, const void* x, bool* out, const Rows& rows) {
  switch (width) {
    case 1:
      return run_steps([](const char* a, const char*, char* o) {
        store(o, _mm512_maskz_mov_epi8(_mm512_movepi8_mask(load(a)), bytes_of(1)));
      }, 64, 1, 1, x, nullptr, out, rows);
    case 2:
      return run_steps([](const char* a, const char*, char* o) {
        const __m256i ones = _mm256_set1_epi8(1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm256_maskz_mov_epi8(_mm512_movepi16_mask(load(a)), ones));
      }, 32, 2, 1, x, nullptr, out, rows);
    case 4:
      return run_steps([](const char* a, const char*, char* o) {
        const __m128i ones = _mm_set1_epi8(1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_maskz_mov_epi8(_mm512_movepi32_mask(load(a)), ones));
      }, 16, 4, 1, x, nullptr, out, rows);
    case 8:
      return run_steps([](const char* a, const char*, char* o) {
        const __m128i ones = _mm_set1_epi8(1);
        const __mmask16 signs = static_cast<__mmask16>(_mm512_movepi64_mask(load(a)) |
                                                       (_mm512_movepi64_mask(load(a + 64)) << 8));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_maskz_mov_epi8(signs, ones));
      }, 16, 8, 1, x, nullptr, out, rows);
  }
}

constinit const KernelTable kernel_table = {&shift_simd, &shift_by_scalar_simd, &shift_by_row_count_simd, &signbit_avx512,
                                              &shift_strided, &strided_shift_in_place_simd};

}  // namespace avx512
}  // namespace torchops

#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif  // defined(__x86_64__)
