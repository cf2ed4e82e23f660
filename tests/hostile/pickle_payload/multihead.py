# append-to-solution
# Returns pickles whose loading would create a file on the grading machine (the test writes
# the path in place of __MARKER__), as bytes, inside an object array, and as a raw frame
# written straight onto the worker's channel.
import os as _os
import pickle as _pickle
import struct as _struct

import numpy as _np


class _Payload:
    def __reduce__(self):
        return (_os.system, ("touch __MARKER__",))


_blob = _pickle.dumps(_Payload())


def softmax(x, axis=-1):
    return _blob


def split_heads(M, num_heads, d_head):
    a = _np.empty(1, dtype=object)
    a[0] = _Payload()
    return a


def merge_heads(H):
    frame = b"MHA1" + _blob
    _os.write(3, _struct.pack("<I", len(frame)) + frame)
    return None
