"""Gradescope's results.json format (its autograder specification), as a JSON schema, and a
validator that adds what this project promises on top (question ids, totals)."""

from __future__ import annotations

import json

import jsonschema

from mha_grader.questions import POINTS, QUESTION_IDS

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
NUMBER = {"type": "number"}

TEST = {
    "type": "object",
    "properties": {
        "score": NUMBER,
        "max_score": NUMBER,
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": FORMAT,
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": VISIBILITY,
        "extra_data": {"type": "object"},
    },
    "additionalProperties": False,
}

SCHEMA = {
    "type": "object",
    "properties": {
        "score": NUMBER,
        "execution_time": NUMBER,
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array"},
    },
    "additionalProperties": False,
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
}


def validate(results: dict, *, per_question: bool = True) -> None:
    """Raise unless ``results`` is a results.json Gradescope accepts and this project's tests
    name their question and add up; ``per_question``: every question's points are there."""
    json.loads(json.dumps(results, allow_nan=False))  # strict JSON: no NaN or Infinity
    jsonschema.validate(results, SCHEMA)
    tests = results.get("tests", [])
    for test in tests:
        assert test["name"].split(":")[0] in QUESTION_IDS, test["name"]
        assert 0 <= test["score"] <= test["max_score"], test
    assert abs(sum(t["score"] for t in tests) - results["score"]) < 1e-6
    if per_question:
        for qid in QUESTION_IDS:
            total = sum(t["max_score"] for t in tests if t["name"].startswith(qid + ":"))
            assert abs(total - POINTS[qid]) < 1e-6, qid
