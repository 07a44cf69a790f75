// Running loops on PyTorch's intra-op thread pool.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>

namespace torchops {

// True in the child of a fork(): GNU OpenMP's pool does not survive fork(), and a parallel
// region in the child of a process that had used it waits forever for threads that do not
// exist (PyTorch 2.13's own ops hang there), so the loops below run on the calling thread.
bool in_forked_child();

// iter.for_each(loop): split across PyTorch's pool (at::parallel_for, so
// torch.set_num_threads governs it and small tensors stay on one thread), serial in the
// child of a fork().
void for_each_row(at::TensorIteratorBase& iter, at::TensorIteratorBase::loop2d_t loop);

// range(begin, end) over [0, n), split as for_each_row splits a one-dimensional iterator
// (TensorIterator's grain of 32768 elements), serial in the child of a fork().
template <typename Range>
void for_each_range(int64_t n, const Range& range) {
  if (n == 0) return;
  if (in_forked_child()) {
    range(int64_t(0), n);
  } else {
    at::parallel_for(0, n, at::internal::GRAIN_SIZE, range);
  }
}

}  // namespace torchops
