"""Large results on huge pages (csrc/ops/memory.h): a result of several MB that an op
allocates is asked 2 MiB pages for before its first write, where Linux offers them on
request (transparent huge pages in "madvise" or "always" mode); smaller ones, and PyTorch's own
tensors, keep the allocator's pages. Read back from /proc/self/smaps: which pages the OS gave,
not how fast (docs/performance.md has the speed)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torchops

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
MODE = re.search(r"\[(\w+)\]", THP.read_text()).group(1) if THP.exists() else None
pytestmark = pytest.mark.skipif(MODE not in ("madvise", "always"),
                                reason=f"transparent huge pages are {MODE or 'absent'} here, not given on request")

MB = 1 << 20


def huge_page_bytes(tensor):
    """The bytes of huge pages in the mappings that hold `tensor`'s storage."""
    begin = tensor.untyped_storage().data_ptr()
    end = begin + tensor.untyped_storage().nbytes()
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", fields[0]):
            low, high = (int(value, 16) for value in fields[0].split("-"))
            inside = low < end and begin < high
        elif inside and fields[0] == "AnonHugePages:":
            total += int(fields[1]) * 1024
    return total


CALLS = {
    "unpackbits": lambda: torchops.unpackbits(torch.zeros(2 * MB, dtype=torch.uint8)),
    "unpack": lambda: torchops.unpack(torch.zeros(8 * MB, dtype=torch.uint8), 4),
    "packbits": lambda: torchops.packbits(torch.zeros(128 * MB, dtype=torch.bool)),
    "bitwise_count": lambda: torchops.bitwise_count(torch.zeros(16 * MB, dtype=torch.int8)),
    "signbit": lambda: torchops.signbit(torch.zeros(16 * MB, dtype=torch.int8)),
    "shift": lambda: torchops.bitwise_left_shift(torch.zeros(16 * MB, dtype=torch.int8), 1),
    "shift_tensor": lambda: torchops.bitwise_left_shift(torch.zeros(16 * MB, dtype=torch.int8),
                                                        torch.ones(16 * MB, dtype=torch.int8)),
    "hamming_distance": lambda: torchops.hamming_distance(torch.zeros(2048, 8, dtype=torch.uint8),
                                                          torch.zeros(2048, 8, dtype=torch.uint8)),
}


@pytest.mark.parametrize("name", CALLS)
def test_a_result_of_several_mb_gets_huge_pages(name):
    # The OS gives a huge page where it has a free 2 MiB block at the fault, so not always
    # every one of the 7 that fit inside a 16 MiB result: some, in one of three results.
    given = []
    for _ in range(3):
        result = CALLS[name]()
        assert result.untyped_storage().nbytes() == 16 * MB
        given.append(huge_page_bytes(result))
        del result
    assert max(given) >= 2 * MB, given


@pytest.mark.skipif(MODE != "madvise", reason="under 'always' every large mapping gets huge pages")
def test_a_small_result_and_pytorchs_own_keep_the_allocators_pages():
    # In a fresh process, so that no earlier result's advice lies under these (the advice
    # stays with the memory's range while the allocator keeps it).
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import torch, torchops\n"
        "from test_huge_pages import huge_page_bytes\n"
        "small = torchops.unpackbits(torch.zeros(2 * 1024 * 1024 // 8, dtype=torch.uint8))  # 2 MiB: below 4 MiB\n"
        "own = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)\n"
        "print(huge_page_bytes(small), huge_page_bytes(own))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.split() == ["0", "0"]
