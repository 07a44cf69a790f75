// The ops are not differentiable. Without a kernel at the Autograd key, PyTorch's
// fallback would attach a grad_fn that warns (or errors) at backward time; this kernel
// says instead, once for every overload, that there is nothing to record: it runs the op
// below autograd and, like PyTorch's own in-place ops, bumps the version counter of every
// tensor the op writes.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>

namespace torchops {
namespace {

void non_differentiable(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& arguments = op.schema().arguments();
  std::vector<at::Tensor> written;
  const size_t first = stack->size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const auto* alias = arguments[i].alias_info();
    if (alias != nullptr && alias->isWrite()) written.push_back((*stack)[first + i].toTensor());
  }
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    op.callBoxed(stack);
  }
  for (const at::Tensor& tensor : written) torch::autograd::increment_version(tensor);
}

}  // namespace

TORCH_LIBRARY_IMPL(torchops, Autograd, m) {
  for (const char* name : {"bitshift", "bitshift.Scalar", "bitshift.out", "bitshift.Scalar_out", "bitshift_",
                           "bitshift_.Scalar", "signbit", "signbit.out"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&non_differentiable>());
  }
}

}  // namespace torchops
