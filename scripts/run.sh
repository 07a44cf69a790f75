#!/usr/bin/env bash
# One entry point for newcomers and CI. Creates .venv (pinned torch 2.13.0 CPU build and
# the dev tools of requirements-dev.txt), builds torchops into it when the C++ sources
# changed, then runs:
#   demo            the seeds' examples through the ops, then the quick benchmark (the default)
#   test [ARGS]     the whole test suite; ARGS go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${TORCHOPS_VENV:-.venv}
python=$venv/bin/python

if [ ! -x "$python" ]; then
  python3 -m venv "$venv"
fi
# torch is pinned in requirements-dev.txt: an unpinned torch would pull a CUDA build.
"$python" -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

library=$(ls torchops/_C*.so 2>/dev/null | head -n 1 || true)
if [ -z "$library" ] || [ -n "$(find csrc setup.py -newer "$library" -print -quit)" ] \
    || ! "$python" -m pip show --quiet torchops >/dev/null 2>&1; then
  echo "Building torchops (about a minute)..."
  # --no-build-isolation: build against the torch installed above, not a fresh unpinned one.
  "$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps -e .
fi

job=${1:-demo}
shift || true
case "$job" in
  demo)
    # matplotlib draws the benchmark's plot; only the demo needs it.
    "$python" -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt
    "$python" examples/demo.py
    echo
    exec "$python" benchmarks/bench.py --quick "$@" ;;
  test) exec "$python" -m pytest tests "$@" ;;
  *) echo "usage: scripts/run.sh [demo|test [pytest args]]" >&2; exit 2 ;;
esac
