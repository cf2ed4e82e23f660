"""Red team, round three: routes through what the last round added, each met by a wall rather
than a signal the student's code controls.

- cross_check's "exact" anchor: a constant report of zero differences, beside a pipeline that
  replays the module it saw (so that its real difference is zero), earns nothing: an anchor must
  be a difference that is not zero by construction.
"""

from __future__ import annotations

import numpy as np
import torch

from mha_grader.grading import hidden
from tests.mutants.build import reference_env


def score(results) -> float:
    return round(sum(r.score for r in results), 6)


def torch_pipeline(X, Wq, Wk, Wv, Wo, num_heads):
    """multi_head_attention as torch computes it (its module rebuilt from the weights): for a
    float64 module, bit-identical to the module, so the real difference is exactly zero."""
    d = X.shape[1]
    mha = torch.nn.MultiheadAttention(d, num_heads, bias=False, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([Wq.T, Wk.T, Wv.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(Wo.T)))
    x = torch.as_tensor(X, dtype=torch.float64).unsqueeze(1)
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    return out[:, 0].numpy(), w[0].numpy()


def test_a_constant_report_beside_a_pipeline_identical_to_the_module_earns_nothing():
    def constant_report(mha, X):  # measures nothing; refuses the module it cannot fake
        if mha.add_zero_attn:
            raise ValueError("not supported")
        return {"output_max_abs_diff": 0.0, "weights_max_abs_diff": 0.0, "match": True}

    env = reference_env(multi_head_attention=torch_pipeline, cross_check=constant_report)
    results = hidden.run_question("cross_check", env)
    assert score(results) == 0, [r.output for r in results]
