"""Code that runs *inside* the sandbox, next to the student's code.

Nothing in this package may import the trusted side (``mha_grader`` outside ``worker``), the
solutions, the hidden tests or the rubrics: this folder is all of the grader a sandbox sees.
"""
