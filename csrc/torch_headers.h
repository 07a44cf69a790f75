// The torch headers of the operator library, compiled once per build: setup.py precompiles
// this header (GCC's .gch) with the library's own flags, and every source that uses torch
// includes it first, as <torch_headers.h>: a precompiled header is used only before a
// source's first token, and the angle form reaches the build's precompiled copy (its folder
// comes first on the include path) rather than this file beside the source. Each then
// compiles in about 40% of its time (parsing these headers was the rest). Where the
// precompiled copy is missing or was made for other flags, GCC reads this file instead; the
// objects are the same either way. The kernel files (csrc/kernels/) include nothing from
// torch.
#pragma once

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/Resize.h>
#include <c10/util/safe_numerics.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>
