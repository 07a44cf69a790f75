// The vector levels' Hamming distances (the portable loops, on 8-byte words, are
// kernels_impl.h's). Included by a level's file inside its namespace, after kernels_impl.h
// and after the level defines these hooks:
//   CodeVec, kCodeVecBytes                         the vector and its bytes
//   kCodeSums                                      its 64-bit lanes: the distances summed at once
//   CodeVec code_zero()
//   CodeVec code_load(const uint8_t* p)            a whole vector
//   CodeVec code_load_tail(const uint8_t* p, int64_t n)
//                                                  0 < n < kCodeVecBytes bytes, zero above them,
//                                                  never reading past p + n
//   CodeVec code_counts(CodeVec a, CodeVec b)      the 1 bits of a ^ b, per 64-bit lane
//   CodeVec code_add(CodeVec a, CodeVec b)         64-bit lane sums
//   void code_store_sums(const CodeVec* sums, int32_t* out, int n)
//                                                  out[s] = the sum of sums[s]'s lanes, s < n
//                                                  (n <= kCodeSums; sums[n..] are zero)
// One code of `a` (a query) goes against kCodeSums codes of `b` at a time, each pair's lane
// counts in a vector of its own: the kCodeSums vectors are then summed across their lanes
// together (a transposing tree of shuffles and adds, a few instructions a pair, where one
// vector's sum alone takes several) and stored as one vector of distances. A code of a common
// size (a whole number of vectors up to 4, or 8, with or without a partial one: 32, 64, 96,
// 128, 256 bytes at either width) has its own loop, where the query's vectors stay in
// registers; any other size takes the loop over vectors (Vectors = -1). b's codes come from a
// tile that the op layer keeps in cache.
// Must not be included outside such a namespace, and includes nothing itself.

template <int Vectors, bool Tail>
inline void hamming_vector_row(const CodeBlock& block, int64_t i) {
  const int64_t vectors = Vectors >= 0 ? Vectors : block.bytes / kCodeVecBytes;
  const int64_t tail = block.bytes - vectors * kCodeVecBytes;
  const uint8_t* a = block.a + i * block.a_stride;
  int32_t* out = block.out + i * block.out_stride;
  const CodeVec a_tail = Tail && tail > 0 ? code_load_tail(a + vectors * kCodeVecBytes, tail) : code_zero();
  CodeVec a_held[Vectors > 0 ? Vectors : 1];
  if constexpr (Vectors > 0) {
    for (int v = 0; v < Vectors; ++v) a_held[v] = code_load(a + v * kCodeVecBytes);
  }
  // The lane counts of a against the code at b.
  const auto pair = [&](const uint8_t* b) {
    CodeVec sum = code_zero();
    if constexpr (Vectors >= 0) {
#pragma GCC unroll 8
      for (int v = 0; v < Vectors; ++v) sum = code_add(sum, code_counts(code_load(b + v * kCodeVecBytes), a_held[v]));
    } else {
      for (int64_t v = 0; v < vectors; ++v) {
        sum = code_add(sum, code_counts(code_load(b + v * kCodeVecBytes), code_load(a + v * kCodeVecBytes)));
      }
    }
    if (Tail && tail > 0) sum = code_add(sum, code_counts(code_load_tail(b + vectors * kCodeVecBytes, tail), a_tail));
    return sum;
  };
  int64_t j = 0;
  for (; j + kCodeSums <= block.n; j += kCodeSums) {
    CodeVec sums[kCodeSums];
#pragma GCC unroll 8
    for (int s = 0; s < kCodeSums; ++s) sums[s] = pair(block.b + (j + s) * block.b_stride);
    code_store_sums(sums, out + j, kCodeSums);
  }
  if (j < block.n) {
    const int rest = static_cast<int>(block.n - j);
    CodeVec sums[kCodeSums];
    for (int s = 0; s < kCodeSums; ++s) sums[s] = s < rest ? pair(block.b + (j + s) * block.b_stride) : code_zero();
    code_store_sums(sums, out + j, rest);
  }
}

inline void hamming_vectors(const CodeBlock& block) {
  const int64_t vectors = block.bytes / kCodeVecBytes;
  const bool tail = block.bytes % kCodeVecBytes != 0;
  const auto rows = [&](auto row) {
    for (int64_t i = 0; i < block.m; ++i) row(block, i);
  };
#define TORCHOPS_CODE_VECTORS(V)                     \
  case 2 * V:                                        \
    return rows(hamming_vector_row<V, false>);       \
  case 2 * V + 1:                                    \
    return rows(hamming_vector_row<V, true>);
  switch (2 * vectors + tail) {
    TORCHOPS_CODE_VECTORS(0)
    TORCHOPS_CODE_VECTORS(1)
    TORCHOPS_CODE_VECTORS(2)
    TORCHOPS_CODE_VECTORS(3)
    TORCHOPS_CODE_VECTORS(4)
    TORCHOPS_CODE_VECTORS(8)
    default:
      return rows(hamming_vector_row<-1, true>);
  }
#undef TORCHOPS_CODE_VECTORS
}
