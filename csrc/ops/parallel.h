// Running loops on PyTorch's intra-op thread pool.
#pragma once

#include <ATen/TensorIterator.h>

#include <functional>

namespace torchops {

// iter.for_each(loop), TensorIterator's 2-D loops: split across PyTorch's pool (at::parallel_for, so
// torch.set_num_threads governs it and small tensors stay on one thread), except in the
// child of a fork(), where it runs on the calling thread: GNU OpenMP's pool does not
// survive fork(), and a parallel region in the child of a process that had used it waits
// forever for threads that do not exist (PyTorch 2.13's own ops hang there).
// `grain_size`: the fewest elements of the iteration a thread is given.
void for_each_loop2d(at::TensorIteratorBase& iter, at::TensorIteratorBase::loop2d_t loop,
                     int64_t grain_size = at::internal::GRAIN_SIZE);

// True when TensorIterator would run a loop over n elements on the calling thread alone:
// fewer than its grain of 32768 elements, or a single intra-op thread. Only such loops may
// skip TensorIterator. Its for_each is compiled into libtorch_cpu, with PyTorch's OpenMP
// pool; at::parallel_for compiled into this library (without OpenMP, so as not to load a
// second runtime) would run serially.
bool runs_on_calling_thread(int64_t n);

// chunk(begin, end) over [0, chunks), split across PyTorch's pool (through TensorIterator's
// for_each, as for_each_loop2d) into as many ranges as there are threads, each thread one
// contiguous range: for work already cut into pieces of a size of its own choosing, each
// piece worth a thread (the search ops' database ranges and tiles).
void for_each_chunk(int64_t chunks, const std::function<void(int64_t begin, int64_t end)>& chunk);

}  // namespace torchops
