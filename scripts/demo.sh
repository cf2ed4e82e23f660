#!/usr/bin/env bash
# The main job, end to end: check the reference solutions (all pass), then the untouched stubs
# (every question "not attempted yet"). Run from anywhere: bash scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
echo "== mha-check on the reference solutions =="
mha-check solutions
echo
echo "== mha-check on the untouched stubs (expected: nothing attempted yet) =="
mha-check exercises || echo "(mha-check exits 1 here: the stubs are not done yet)"
