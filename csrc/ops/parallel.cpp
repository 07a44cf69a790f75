#include "ops/parallel.h"

#include <pthread.h>

#include <atomic>

namespace torchops {
namespace {

std::atomic<bool> forked_child{false};

void mark_forked_child() { forked_child.store(true, std::memory_order_relaxed); }

// Registered when the library loads, before any fork() that could matter.
[[maybe_unused]] const int atfork_registered = pthread_atfork(nullptr, nullptr, &mark_forked_child);

}  // namespace

bool in_forked_child() {
  return forked_child.load(std::memory_order_relaxed);
}

void for_each_row(at::TensorIteratorBase& iter, at::TensorIteratorBase::loop2d_t loop) {
  if (in_forked_child()) {
    iter.serial_for_each(loop, {0, iter.numel()});
  } else {
    iter.for_each(loop);
  }
}

}  // namespace torchops
