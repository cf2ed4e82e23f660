#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image: the zip's contents
# are in /autograder/source, this file's folder. It gets a Python the pinned packages support,
# makes a virtualenv with what grading needs (not the notebook's or the plots' packages) and
# checks that grading can start. It stops at the first failure, saying why.
#
# Optional environment (all documented in docs/instructors.md, 'Gradescope'):
#   MHA_TORCH_INDEX_URL  PyTorch's CPU wheel index: torch 2.13.0 then comes as its small CPU
#                        build, not the multi-GB CUDA one (may be set when the zip is built)
#   MHA_PYTHON           grade with this interpreter (e.g. a ready virtualenv's python) instead
#                        of making $ROOT/venv; packages missing from it are installed into it
#   MHA_SKIP_APT=1       no apt-get: what it would install is already there (local runs, tests)
#   MHA_OS_RELEASE       the image description to read (default /etc/os-release)
#   MHA_AUTOGRADER_ROOT  the root (default /autograder)
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${MHA_AUTOGRADER_ROOT:-/autograder}"
fail() {
    echo "setup.sh: $*" >&2
    exit 1
}
cd "$SOURCE"

# 1. A Python for the choice itself: the image's python3 (or the one asked for).
SYSPY="${MHA_PYTHON:-$(command -v python3 || true)}"
[ -n "$SYSPY" ] || fail "no python3 in this image; choose Gradescope's Ubuntu 22.04 or 24.04 base image"
"$SYSPY" -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null ||
    fail "$SYSPY is older than Python 3.7; grading needs Python 3.11 to 3.14"

# 2. Which interpreter grades, and what apt installs first (see mha_grader/handouts/gradescope/interpreter.py).
CHOOSE=("$SYSPY" "$SOURCE/mha_grader/handouts/gradescope/interpreter.py" --os-release "${MHA_OS_RELEASE:-/etc/os-release}")
[ -n "${MHA_PYTHON:-}" ] && CHOOSE+=(--python "$MHA_PYTHON")
plan="$("${CHOOSE[@]}")" || exit 1
PY="$(sed -n 's/^python=//p' <<<"$plan")"
APT="$(sed -n 's/^apt=//p' <<<"$plan")"
if [ -n "$APT" ]; then
    if [ "${MHA_SKIP_APT:-0}" = 1 ]; then
        echo "setup.sh: MHA_SKIP_APT=1: not installing $APT"
    else
        echo "setup.sh: apt-get install $APT"
        apt-get update -qq || fail "apt-get update failed"
        # shellcheck disable=SC2086  # a list of package names
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $APT >/dev/null ||
            fail "apt-get could not install: $APT"
    fi
    [ -n "${MHA_PYTHON:-}" ] || "$SYSPY" "$SOURCE/mha_grader/handouts/gradescope/interpreter.py" --python "$PY" >/dev/null ||
        exit 1 # the interpreter apt was to provide must now run and be supported
fi

# 3. The virtualenv (unless MHA_PYTHON names one) with the grading packages, pinned by the lock.
if [ -z "${MHA_PYTHON:-}" ]; then
    [ -x "$ROOT/venv/bin/python" ] || "$PY" -m venv "$ROOT/venv" || fail "$PY could not make a virtualenv"
    PY="$ROOT/venv/bin/python"
fi
PIP=("$PY" -m pip install --disable-pip-version-check -q)
if [ -n "${MHA_TORCH_INDEX_URL:-}" ]; then
    PIP+=(--extra-index-url "$MHA_TORCH_INDEX_URL")
else
    echo "setup.sh: MHA_TORCH_INDEX_URL is not set: torch may come as its multi-GB CUDA build"
fi
"${PIP[@]}" -c requirements.lock -r requirements-grading.txt || fail "pip could not install requirements-grading.txt"
"${PIP[@]}" --no-deps -r requirements-nodeps.txt || fail "pip could not install requirements-nodeps.txt"

# 4. Grading must be able to start: its imports, the hidden tests, the pinned versions.
"$PY" -m mha_grader.handouts.gradescope.run --check || fail "the grader cannot start with $PY"
"$PY" -m compileall -q "$SOURCE" >/dev/null || true # a faster first submission

# 5. run_autograder grades with this interpreter; the worker's uid must be able to read it.
echo "$PY" >"$SOURCE/python-path"
if [ -z "${MHA_PYTHON:-}" ]; then
    chmod -R go+rX,go-w "$ROOT/venv"
fi
echo "setup.sh: ready: grading with $("$PY" -c 'import sys; print(sys.version.split()[0])') ($PY)"
