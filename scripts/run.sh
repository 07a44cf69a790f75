#!/usr/bin/env bash
# One entry point for newcomers and CI. Creates .venv (pinned torch 2.13.0 CPU build and
# the dev tools of requirements-dev.txt), builds torchops (its two extensions) into it when
# the C++ sources changed, then runs:
#   demo            the specifications' worked examples through the ops, then the quick benchmark (the default)
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

# Rebuild when either extension (the operator library _C, the Python binding _binding) is
# missing or older than a source.
stale=no
for extension in _C _binding; do
  built=$(ls torchops/$extension*.so 2>/dev/null | head -n 1 || true)
  if [ -z "$built" ] || [ -n "$(find csrc binding setup.py -newer "$built" -print -quit)" ]; then
    stale=yes
  fi
done
if [ "$stale" = yes ] || ! "$python" -m pip show --quiet torchops >/dev/null 2>&1; then
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
