#!/usr/bin/env bash
# The whole test suite plus ruff (lint and format). Run from anywhere: bash scripts/test.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
ruff check .
ruff format --check .
set +e
# On every core, a test file per process at a time (its module fixtures, such as a started
# grader, are made once).
python -m pytest -n auto --dist loadfile "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
