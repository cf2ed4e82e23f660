"""``mha-grade bundle -o FILE.zip``: the student hand-out (docs/contract.md §4)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..handouts.bundle import BUNDLE_DIR, build_bundle

HELP = "build the student hand-out zip (stubs, public tests, mha-check, lab notebook)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--out", type=Path, required=True, help="the student .zip to write")


def main(args: argparse.Namespace) -> int:
    out = build_bundle(args.out)
    print(f"student bundle: {out}")
    print(f"students unzip it, then run: cd {BUNDLE_DIR} && python -m mha_check")
    return 0
