"""The worked examples of the specifications torchops follows, run through torchops: ONNX
BitShift (opset 28), Paddle's shift RFC, pypto.signbit, NumPy's np.bitwise_count.

Each line shows the call, what torchops returns and what the source document says it
must return; the demo exits non-zero if any of them disagree.
"""
import sys

import torch

import torchops

i8, i16, i32, i64 = torch.int8, torch.int16, torch.int32, torch.int64

# (source, x, y, direction, arithmetic, dtype, expected) -- expected values are the documents' own.
SHIFTS = [
    ("ONNX left_int16", [16, 4, 1], [1, 2, 3], "LEFT", True, i16, [32, 16, 8]),
    ("ONNX left_int32_negative_shift", [-8, 4, -1], [-1, -32, -64], "LEFT", True, i32, [0, 0, 0]),
    ("ONNX left_int32_overflow", [1073741824, 1, -1073741824], [1, 31, 1], "LEFT", True, i32, [-2147483648] * 3),
    ("ONNX left_int8_overflow", [64, 1, -64], [1, 7, 1], "LEFT", True, i8, [-128, -128, -128]),
    ("ONNX left_int8_shift_ge_width", [-8, 4, -1], [8, 9, 127], "LEFT", True, i8, [0, 0, 0]),
    ("ONNX right_int64", [16, 4, 1], [1, 2, 3], "RIGHT", True, i64, [8, 1, 0]),
    ("ONNX right_int32_negative_input", [-8, -1, -2147483648], [1, 1, 1], "RIGHT", True, i32, [-4, -1, -1073741824]),
    ("ONNX right_int8_negative_shift", [-8, 4, -1], [-1, -8, -16], "RIGHT", True, i8, [-1, 0, -1]),
    ("ONNX right_int32_shift_ge_width", [-8, 4, -1], [32, 33, 100], "RIGHT", True, i32, [-1, 0, -1]),
    ("Paddle 0b10011010 >> 3 arithmetic", [-102], [3], "RIGHT", True, i8, [-13]),  # 0b11110011
    ("Paddle 0b10011010 >> 3 logical", [-102], [3], "RIGHT", False, i8, [19]),  # 0b00010011
    ("Paddle -45 << 2, -45 << 3", [-45, -45], [2, 3], "LEFT", True, i8, [76, -104]),
]


def main() -> int:
    failures = 0
    print(f"torchops demo (torch {torch.__version__})\n")
    for source, x, y, direction, arithmetic, dtype, expected in SHIFTS:
        got = torchops.bitshift(torch.tensor(x, dtype=dtype), torch.tensor(y, dtype=dtype), direction, arithmetic)
        ok = got.tolist() == expected
        failures += not ok
        kind = "" if direction == "LEFT" else (" arithmetic" if arithmetic else " logical")
        print(f"{'ok ' if ok else 'BAD'} {source:36} {str(dtype)[6:]:5} {x} {direction}{kind} {y} -> {got.tolist()}"
              f"{'' if ok else f'  (expected {expected})'}")

    count = 257  # a Python-int count is taken by value: PyTorch's builtin wraps it to 1
    x = torch.tensor([1], dtype=i8)
    got = torchops.bitwise_left_shift(x, count)
    print(f"\n{'ok ' if got.tolist() == [0] else 'BAD'} int8 1 << {count}: torchops {got.tolist()}, "
          f"torch.bitwise_left_shift {torch.bitwise_left_shift(x, count).tolist()}")
    failures += got.tolist() != [0]

    values = [-5.0, 0.0, 5.0, 10.0, -2.0]
    got = torchops.signbit(torch.tensor(values))
    ok = got.tolist() == [True, False, False, False, True]
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} pypto signbit {values} -> {got.tolist()}")
    special = torch.tensor([-0.0, float("-inf"), float("nan"), -float("nan")])
    print(f"    signbit [-0.0, -inf, nan, -nan] -> {torchops.signbit(special).tolist()} (IEEE sign bit)")

    # NumPy's np.bitwise_count documentation: 1023 has 10 one bits, 2**i - 1 has i.
    values = [1023] + [2**i - 1 for i in range(16)]
    got = torchops.bitwise_count(torch.tensor(values))
    ok = got.tolist() == [10] + list(range(16)) and got.dtype == torch.uint8
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} NumPy bitwise_count [1023, 2**i - 1 for i < 16] -> {got.tolist()} ({got.dtype})")
    print(f"    bitwise_count int8 [-1, -128] -> {torchops.bitwise_count(torch.tensor([-1, -128], dtype=i8)).tolist()} "
          "(the bits of |x|, as NumPy)")

    print(f"\n{'all examples hold' if failures == 0 else f'{failures} example(s) FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
