#!/usr/bin/env bash
# The main job, end to end: batch-grade the example class in examples/submissions into out/.
# Run from anywhere: bash scripts/demo.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
mha-grade batch examples/submissions -o out
