# append-to-solution
# Tries to smuggle the hidden inputs into its feedback: through an exception's message, through
# printed output, and through a file that a restarted worker prints while being imported.
import os as _os

import numpy as _np

_STASH = "/tmp/stash.txt"
if _os.path.exists(_STASH):
    print("stashed:", open(_STASH).read())


def softmax(x, axis=-1):
    text = " ".join(f"{v:.6f}" for v in _np.asarray(x).ravel())
    print(text)
    for path in (_STASH, "stash.txt"):
        try:
            with open(path, "w") as f:
                f.write(text)
        except OSError:
            pass
    raise ValueError(f"inputs were {text}")


def split_heads(M, num_heads, d_head):
    _os._exit(1)  # makes the grader start a new worker, which imports this file again
