#!/usr/bin/env bash
# The whole test suite plus ruff (lint and format). Run from anywhere: bash scripts/test.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# tests/test_slurm.py runs the Slurm job script on a real single-node Slurm: Debian's daemons,
# installed here (not in env.sh: grading itself never needs them). Without them that test is
# skipped, and pytest's summary says why.
installed() { PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1; }
if ! installed slurmctld || ! installed slurmd || ! installed munged || ! installed sbatch; then
    echo "== installing slurmctld, slurmd and munge (for tests/test_slurm.py) =="
    if ! apt_install slurmctld slurmd munge 2>/tmp/mha-slurm-apt.log; then
        tail -5 /tmp/mha-slurm-apt.log >&2
        echo "warning: Slurm could not be installed (it needs root and apt-get);" \
            "tests/test_slurm.py will be skipped" >&2
    fi
fi
ruff check .
ruff format --check .
# The suite starts a few hundred interpreters (grading processes, sandboxes, mha-check): each
# would compile the project's modules again where PYTHONDONTWRITEBYTECODE is set. Compiled once
# here, they are read instead (the bundle, the Gradescope zip and the fingerprint leave
# __pycache__ out).
python -m compileall -q -j 0 mha_grader mha_check autograder solutions >/dev/null
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
