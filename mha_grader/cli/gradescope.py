"""``mha-grade gradescope -o FILE.zip``: a Gradescope autograder (docs/contract.md §4)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..handouts.bundle import write_zip
from ..handouts.gradescope.build import EXECUTABLE, TORCH_INDEX_VARIABLE, autograder_members

HELP = "build a Gradescope autograder zip"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--out", type=Path, required=True, help="the autograder .zip to write")


def main(args: argparse.Namespace) -> int:
    torch_index = os.environ.get(TORCH_INDEX_VARIABLE) or None
    out = write_zip(args.out, autograder_members(torch_index), EXECUTABLE)
    print(f"Gradescope autograder: {out}")
    print("Upload it as a zip-file autograder; base image Ubuntu 22.04 or 24.04.")
    if not torch_index:
        print(
            f"Note: {TORCH_INDEX_VARIABLE} was not set, so setup.sh installs torch from the "
            "default index (on Linux, the multi-GB CUDA build). Set it to PyTorch's CPU wheel "
            "index and build the zip again for the small CPU build."
        )
    return 0
