"""cross_check's float64 bound and the moderate difference that tests it (contract §1, the
cross_check paragraph): grading's honesty check and the diagnosis make the same difference, so
it is defined once, here, in the room both may import."""

from __future__ import annotations

import numpy as np

# A float64 module whose pipeline differs by more than MODERATE * scale is no match (float32
# keeps honesty.LARGE: its tolerance may be as loose as 1e-2). The moderate difference, made by
# answering cross_check's calls of multi_head_attention with the reference's output moved (its
# largest entry by SHIFT * scale), lies between the two.
MODERATE = 1e-3
SHIFT = 2e-3


def moved(out: np.ndarray, size: float) -> np.ndarray:
    """``out`` with every entry moved in proportion to it, the largest by SHIFT * ``size``: a
    difference an absolute tolerance above MODERATE * size calls a match, and so does a
    relative one above SHIFT (bfloat16's 1.6e-2)."""
    top = float(np.max(np.abs(out)))
    return out * (1.0 + SHIFT * size / top) if top > 0 else out + SHIFT * size
