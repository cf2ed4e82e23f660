"""Trusted grading code: hidden tests, sandboxed execution of student code, reports.

Student code never runs in this package's process; it runs in ``mha_grader.worker`` inside a
sandbox, and only plain data crosses back.
"""
