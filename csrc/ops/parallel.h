// Running loops on PyTorch's intra-op thread pool.
#pragma once

#include <ATen/TensorIterator.h>

#include <algorithm>
#include <functional>

namespace torchops {

// The one rule for splitting a loop across threads: by the bytes it reads and writes, not
// its elements. A call that touches fewer than kParallelBytes runs on the calling thread:
// below that, waking a second thread and splitting the work cost more than the second
// thread saves. Measured (docs/performance.md, "When a second thread joins"): on 2 threads,
// calls of 128-384 KiB run at 0.73-0.94x their 1-thread speed, calls of 512 KiB at 1.3x and more.
// A call of n >= grain elements is split into ceil(n / grain) ranges (at most one a
// thread), so a call of more than kParallelBytes gives each thread at least half of them
// (one of exactly kParallelBytes would be one range in a parallel region: the grain is one
// element more).
constexpr int64_t kParallelBytes = int64_t{512} << 10;

// The grain (TensorIterator's grain_size: a loop of fewer elements runs on the calling
// thread) of a loop that reads and writes `bytes` bytes for every `elements` elements.
// A loop that touches no bytes (codes of 0 bytes) is one of the smallest: it is counted as 1.
inline int64_t grain_for(int64_t bytes, int64_t elements = 1) {
  return kParallelBytes * elements / std::max<int64_t>(bytes, 1) + 1;
}

// iter.for_each(loop), TensorIterator's 2-D loops: split across PyTorch's pool (at::parallel_for, so
// torch.set_num_threads governs it), by `grain_size` (grain_for), except in the child of a
// fork(), where it runs on the calling thread: GNU OpenMP's pool does not survive fork(), and
// a parallel region in the child of a process that had used it waits forever for threads
// that do not exist (PyTorch 2.13's own ops hang there).
void for_each_loop2d(at::TensorIteratorBase& iter, at::TensorIteratorBase::loop2d_t loop, int64_t grain_size);

// True when TensorIterator would run a loop over n elements on the calling thread alone:
// fewer than `grain_size` elements (grain_for), or a single intra-op thread. Only such loops
// may skip TensorIterator. Its for_each is compiled into libtorch_cpu, with PyTorch's OpenMP
// pool; at::parallel_for compiled into this library (without OpenMP, so as not to load a
// second runtime) would run serially.
bool runs_on_calling_thread(int64_t n, int64_t grain_size);

// chunk(begin, end) over [0, chunks), split across PyTorch's pool (through TensorIterator's
// for_each, as for_each_loop2d) into as many ranges as there are threads, each thread one
// contiguous range: for work already cut into pieces of a size of its own choosing, each
// piece worth a thread (the search ops' database ranges and tiles).
void for_each_chunk(int64_t chunks, const std::function<void(int64_t begin, int64_t end)>& chunk);

}  // namespace torchops
