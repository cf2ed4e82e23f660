"""The mutation suite: buggy and correct student submissions, for the diagnosis tests.

Each submission is the reference solution with some functions replaced by the ones written here
(in other styles than the diagnosis' own mutants: np.reshape vs .reshape, einsum vs matmul,
loops vs vectorised). ``build.SUBMISSIONS`` lists them with what they should be diagnosed as.
"""
