"""Hostile too: wrong on its own, and tries to copy the reference (see multihead.py)."""

import numpy as np

from multihead import _steal


def weights_from_torch(mha):
    d = mha.embed_dim
    return tuple(np.zeros((d, d)) for _ in range(4))


def cross_check(mha, X):
    return {"output_max_abs_diff": 0.0, "weights_max_abs_diff": 0.0, "match": False}


_steal("crosscheck.py")
