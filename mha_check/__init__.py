"""mha-check: the student's local check of the public tests (runs on the student's own machine).

Ships to students without the grader: nothing here may import ``mha_grader`` or ``solutions``.
"""
