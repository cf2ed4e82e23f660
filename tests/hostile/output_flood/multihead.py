# append-to-solution
# Floods stdout and stderr while importing and inside a call; the functions stay correct.
import sys as _sys

for _ in range(2000):
    print("x" * 1000)
    print("e" * 1000, file=_sys.stderr)

_reference_softmax = globals()["softmax"]  # the reference, defined above


def softmax(x, axis=-1):
    print(x)  # would echo the hidden inputs if the grader showed it
    _sys.stdout.write("y" * 1_000_000)
    return _reference_softmax(x, axis)
