"""The worked examples of the specifications torchops follows, run through torchops: ONNX
BitShift (opset 28), Paddle's shift RFC, pypto.signbit, NumPy's np.bitwise_count,
np.packbits and np.unpackbits; then what packing is for: a bool mask packed and unpacked,
int4 weights unpacked, and a binary-embedding search.

Each line shows the call, what torchops returns and what the source document says it
must return (or, for the uses, what must hold); the demo exits non-zero if any disagree.
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

    failures += packing_and_search()
    print(f"\n{'all examples hold' if failures == 0 else f'{failures} example(s) FAILED'}")
    return 1 if failures else 0


def packing_and_search() -> int:
    """NumPy's packbits/unpackbits documentation examples, then packing's uses; the failures."""
    failures = 0
    # np.packbits's and np.unpackbits's documentation: their examples' arrays and results.
    a = torch.tensor([[[1, 0, 1], [0, 1, 0]], [[1, 1, 0], [0, 0, 1]]], dtype=torch.uint8)
    got = torchops.packbits(a, dim=-1)
    ok = got.tolist() == [[[160], [64]], [[192], [32]]]
    failures += not ok
    print(f"\n{'ok ' if ok else 'BAD'} NumPy packbits {a.tolist()}, axis=-1 -> {got.tolist()}")
    b = torch.tensor([[2], [7], [23]], dtype=torch.uint8)
    got = torchops.unpackbits(b, dim=1)
    ok = got.tolist() == [[0, 0, 0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 0, 1, 1, 1]]
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} NumPy unpackbits {b.tolist()}, axis=1 -> {got.tolist()}")

    generator = torch.Generator().manual_seed(0)
    mask = torch.rand(1000, 1000, generator=generator) > 0.5
    packed = torchops.packbits(mask)
    ok = torch.equal(torchops.unpackbits(packed, count=mask.shape[-1]).bool(), mask)
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} a (1000, 1000) bool mask packed: {mask.nbytes:,} bytes -> {packed.nbytes:,}, "
          "unpacked back equal")
    weights = torch.randint(-8, 8, (4096, 4096), dtype=i8, generator=generator)
    int4 = torchops.pack(weights, 4)
    ok = torch.equal(torchops.unpack(int4, 4, signed=True), weights)
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} int4 weights (4096, 4096), 2 a byte: {weights.nbytes:,} bytes -> {int4.nbytes:,}, "
          "unpacked sign-extended back equal")

    embeddings = torch.randn(100_000, 1024, generator=generator)
    database = torchops.packbits(embeddings > 0)
    queries = torchops.packbits(embeddings[:16] + 0.5 * torch.randn(16, 1024, generator=generator) > 0)
    values, indices = torchops.hamming_topk(queries, database, 10)
    ok = torch.equal(indices[:, 0], torch.arange(16))
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} binary embeddings: 100,000 float32 vectors of 1024 dimensions "
          f"({embeddings.nbytes / 2**20:.0f} MiB) packed to {database.nbytes / 2**20:.1f} MiB; hamming_topk of 16 "
          f"noisy copies finds each one's source first (distances {values[:, 0].min()}-{values[:, 0].max()} bits, "
          f"the next nearest {values[:, 1].min()} or more)")
    return failures


if __name__ == "__main__":
    sys.exit(main())
