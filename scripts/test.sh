#!/usr/bin/env bash
# The whole test suite plus ruff (lint and format). Run from anywhere: bash scripts/test.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# tests/test_slurm.py runs the Slurm job script on a real single-node Slurm: Debian's daemons,
# installed here (not in env.sh: grading itself never needs them). Without them that test is
# skipped, and pytest's summary says why.
installed() { PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1; }
if ! installed slurmctld || ! installed slurmd || ! installed munged || ! installed sbatch; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing slurmctld, slurmd and munge (for tests/test_slurm.py) =="
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends slurmctld slurmd munge; } >/tmp/mha-slurm-apt.log 2>&1; then
            tail -5 /tmp/mha-slurm-apt.log >&2
            echo "warning: Slurm could not be installed; tests/test_slurm.py will be skipped" >&2
        fi
    else
        echo "warning: Slurm is not installed (needs root and apt-get); tests/test_slurm.py" \
            "will be skipped" >&2
    fi
fi
ruff check .
ruff format --check .
set +e
python -m pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
