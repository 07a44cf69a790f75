// Runs ShiftModel (examples/shift_model.py) from C++ three ways and checks they agree:
// (a) the TorchScript model, (b) the AOTInductor package, (c) the same ops called
// through the torchops C++ API. Writes the inputs and outputs to OUT_FILE (readable with
// torch.load) so that a test can compare them with the eager Python model.
//
//   run_shift_model ARTIFACT_DIR OUT_FILE
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/script.h>
#include <torch/serialize.h>
#include <torchops/ops.h>

#include <fstream>
#include <iostream>
#include <sstream>

// "[a, b, c]" for a 1-D integer or bool tensor.
std::string row(const at::Tensor& tensor) {
  const at::Tensor values = tensor.to(torch::kLong).contiguous();
  std::ostringstream text;
  text << "[";
  for (int64_t i = 0; i < values.numel(); ++i) text << (i ? ", " : "") << values.data_ptr<int64_t>()[i];
  return text.str() + "]";
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: run_shift_model ARTIFACT_DIR OUT_FILE\n";
    return 2;
  }
  const std::string dir = argv[1];
  // example_inputs(batch=6) of shift_model.py: a batch size the export did not see.
  const at::Tensor x = torch::arange(6 * 8, torch::kInt32).reshape({6, 8}) * 123457 - 3000000;
  const at::Tensor counts = torch::arange(8, torch::kInt32) * 5 - 3;

  // (a) TorchScript: the operators are registered because this program links torchops.
  torch::jit::Module scripted = torch::jit::load(dir + "/shift_model.pt");
  const c10::IValue script_result = scripted.forward({x, counts});
  std::vector<at::Tensor> from_script;
  for (const c10::IValue& value : script_result.toTupleRef().elements()) {
    from_script.push_back(value.toTensor());
  }

  // (b) AOTInductor: the package calls the torchops operators through the dispatcher.
  torch::inductor::AOTIModelPackageLoader package(dir + "/shift_model_aoti.pt2");
  const std::vector<at::Tensor> from_package = package.run({x, counts});

  // (c) The C++ API, mirroring ShiftModel.forward.
  at::Tensor arithmetic = torch::empty_like(x), halved = torch::empty_like(x);
  at::Tensor shifted = x.clone(), negative_out = torch::empty(x.sizes(), x.options().dtype(torch::kBool));
  at::Tensor count_bits = torch::empty(counts.sizes(), counts.options().dtype(torch::kByte));
  torchops::bitshift_out(arithmetic, x, counts, "RIGHT", true);
  torchops::bitshift_out(halved, x, 1, "RIGHT", true);
  torchops::bitshift_(shifted, counts, "LEFT");
  torchops::bitshift_(shifted, 2, "RIGHT", false);
  torchops::signbit_out(negative_out, x);
  torchops::bitwise_count_out(count_bits, counts);
  const std::vector<at::Tensor> from_api = {
      torchops::bitshift(x, counts, "LEFT"), torchops::bitshift(x, 3, "RIGHT", false), arithmetic, halved,
      shifted, torchops::signbit(x), negative_out, torchops::bitwise_count(x), count_bits};

  bool agree = from_script.size() == from_api.size() && from_package.size() == from_api.size();
  for (size_t i = 0; agree && i < from_api.size(); ++i) {
    agree = from_script[i].equal(from_api[i]) && from_package[i].equal(from_api[i]);
  }
  std::cout << "x[0]:             " << row(x[0]) << "\ncounts:           " << row(counts)
            << "\nx[0] << counts:   " << row(from_api[0][0]) << "\nx[0] >>> 3:       " << row(from_api[1][0])
            << "\nsignbit(x[0]):    " << row(from_api[5][0]) << "\nbitwise_count(x[0]): " << row(from_api[7][0])
            << "\n";
  std::cout << (agree ? "TorchScript, AOTInductor and the C++ API agree\n"
                      : "MISMATCH between TorchScript, AOTInductor and the C++ API\n");

  // Bad input gets the same errors as in Python: here a c10::TypeError naming the dtype.
  try {
    torchops::bitshift(x.to(torch::kFloat), 1, "LEFT");
  } catch (const c10::TypeError& error) {
    std::cout << "refused: " << error.what_without_backtrace() << "\n";
  }

  std::vector<c10::IValue> saved = {x, counts};
  saved.insert(saved.end(), from_api.begin(), from_api.end());
  const std::vector<char> bytes = torch::pickle_save(c10::ivalue::Tuple::create(std::move(saved)));
  std::ofstream(argv[2], std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return agree ? 0 : 1;
}
