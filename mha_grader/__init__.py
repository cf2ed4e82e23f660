"""Trusted grading code: hidden tests, sandboxed execution of student code, reports.

Student code never runs in this package's process; it runs in ``mha_grader.sandbox.worker``
inside a sandbox, and only plain data crosses back. The rooms of the package, from the lowest
up (a room imports only rooms below it; ``tests/test_layout.py`` holds it to that):

- this folder's modules: the vocabulary every room shares (``paths``, ``points``, ``outcomes``,
  ``errors``, ``shown``);
- ``sandbox/``: the containment layers, the zygote, and ``worker/``, the only code in the sandbox;
- ``diagnose/`` and ``written/``: naming the mistake behind a wrong answer; grading written
  answers;
- ``grading/``: one submission graded (engine, worker session, hidden tests, carry forward);
- ``outputs/``: the output folder and what is written into it;
- ``review/``: a person's decisions;
- ``runs/``: ``one``, ``batch`` (and shards), ``merge``;
- ``handouts/``: the student bundle and the Gradescope autograder;
- ``cli/``: ``mha-grade``, one module per command.

docs/maintainers.md walks one submission through them.
"""
