"""``python -m mha_grader.written.refresh``: after changing a hand-out, a rubric or the code that
reads them, write the hand-outs' snapshot (sources.py) and each rubric's reading of it
(handout_index.py) again."""

from __future__ import annotations

import sys

from . import copies, handout_index, sources


def main() -> int:
    sources.main(["--write"])
    sources.load_handouts.cache_clear()
    handout_index.key.cache_clear()
    handout_index.write(copies.read_sentences, copies.read_lines)
    print(f"wrote {handout_index.INDEX}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
