"""Reporting helpers shared by bench.py and compiled.py.

Size labels, plain-text and Markdown tables, the description of the machine and of the
torchops source measured, the results.csv / results.json writers, and the exit status for
cases whose outputs differed. What a benchmark's table holds (its columns and cells), its
targets and its results.md text stay in that benchmark's file.
"""
from __future__ import annotations

import csv
import json
import os
import platform
import subprocess
import sys

import numpy as np
import torch

import torchops

K, M = 1 << 10, 1 << 20

NOISE = 0.9  # ratios near 1 vary by about 10% between runs on this shared 2-core machine


def size_label(n: int) -> str:
    return f"{n >> 20}M" if n >= M and n % M == 0 else f"{n >> 10}K" if n >= K and n % K == 0 else str(n)


def aligned_table(columns: list[str], body: list[list[str]], left: int) -> str:
    """Plain-text table: the first `left` columns aligned left, the others (numbers) right."""
    table = [columns] + body
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
             for line in table]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def markdown_rows(columns: list[str], body: list[list[str]], left: int) -> str:
    """The same as a Markdown table."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * left + "---:|" * (len(columns) - left)]
    lines += ["| " + " | ".join(cell.replace("*", "\\*") for cell in line) + " |" for line in body]
    return "\n".join(lines)


def source_version() -> str:
    """The commit measured (with '+changes' when the work tree differs from it)."""
    def git(*args):
        # the checkout of the torchops being measured (PYTHONPATH may name another one)
        return subprocess.run(["git", *args], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(torchops.__file__))).stdout.strip()
    try:
        commit = git("rev-parse", "--short", "HEAD")
        return (commit + (" +changes" if git("status", "--porcelain", "--untracked-files=no") else "")) or "unknown"
    except OSError:
        return "unknown"


def machine_info(levels: list[str], level: str, all_threads: int) -> dict:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            cpu = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "torch threads": all_threads, "torch": torch.__version__,
        "numpy": np.__version__, "python": platform.python_version(), "torchops level": level,
        "levels measured": ", ".join(levels),
        # PyTorch's own kernel level: its best on this CPU, or what ATEN_CPU_CAPABILITY chose.
        "PyTorch level": torch.backends.cpu.get_cpu_capability().lower(),
    }


def machine_markdown(info: dict) -> str:
    """machine_info() (and what a benchmark added to it) as a Markdown list, for results.md."""
    return "\n".join(f"- {key}: {value}" for key, value in info.items())


def row_keys(rows: list[dict]) -> list[str]:
    """Every key any row has, in the order first seen: the columns of results.csv (a case whose
    outputs differed has fewer keys than a timed one)."""
    return list(dict.fromkeys(key for row in rows for key in row))


def write_csv(path: str, rows, columns: list[str]) -> None:
    """results.csv: a header of `columns`, then one line per row (empty where a row lacks a column)."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def write_json(path: str, info: dict, mode: str, wall_seconds: float, rows: list[dict], **extra) -> None:
    """results.json: the machine, the mode, the run's duration, `extra` (a benchmark's own
    sections), then the rows, in that order."""
    with open(path, "w") as handle:
        json.dump({"machine": info, "mode": mode, "wall_seconds": round(wall_seconds, 1), **extra, "rows": rows},
                  handle, indent=1)


def exit_if_mismatched(rows: list[dict], name_of) -> None:
    """Exit 1, listing them, if any case was not timed because its outputs differ."""
    mismatches = [r for r in rows if r["verified"] != "ok"]
    if mismatches:
        print(f"\n{len(mismatches)} case(s) not timed because outputs differ:", file=sys.stderr)
        for row in mismatches:
            print(f"  {name_of(row)}: {row['verified']}", file=sys.stderr)
        sys.exit(1)
