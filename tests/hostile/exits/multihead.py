# append-to-solution
# split_heads kills its own process; merge_heads asks the interpreter to exit.
import os as _os
import sys as _sys


def split_heads(M, num_heads, d_head):
    _os._exit(3)


def merge_heads(H):
    _sys.exit("bye")
