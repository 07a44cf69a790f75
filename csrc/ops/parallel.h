// Running a TensorIterator loop on PyTorch's intra-op thread pool.
#pragma once

#include <ATen/TensorIterator.h>

namespace torchops {

// iter.for_each(loop): split across PyTorch's pool (at::parallel_for, so
// torch.set_num_threads governs it and small tensors stay on one thread), except in the
// child of a fork(), where it runs on the calling thread: GNU OpenMP's pool does not
// survive fork(), and a parallel region in the child of a process that had used it waits
// forever for threads that do not exist (PyTorch 2.13's own ops hang there).
void for_each_row(at::TensorIteratorBase& iter, at::TensorIteratorBase::loop2d_t loop);

}  // namespace torchops
