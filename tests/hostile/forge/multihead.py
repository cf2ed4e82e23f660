# append-to-solution
# Every function is a stub that returns zeros, but the module tries to write a perfect
# results.json and grades.csv where the grader writes its reports (the test puts the real
# output folder in place of __OUT__), and in every folder it can reach.
import json as _json
import os as _os

_perfect = {"score": 1000, "tests": [{"name": "softmax: forged", "score": 1000, "max_score": 1}]}
_written = []
for _folder in ("__OUT__", "__OUT__/students/forge", _os.getcwd(), "/tmp", "/", "__CHECKOUT__"):
    for _name, _text in (
        ("results.json", _json.dumps(_perfect)),
        ("grades.csv", "student,total\nforge,1000\n"),
    ):
        try:
            _os.makedirs(_folder, exist_ok=True)
            with open(_os.path.join(_folder, _name), "w") as _f:
                _f.write(_text)
            _written.append(_os.path.join(_folder, _name))
        except OSError:
            pass


def softmax(x, axis=-1):
    import numpy as np

    return np.zeros_like(x)


def written():
    return list(_written)
