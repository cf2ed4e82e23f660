"""What a hidden test case is handed besides the student's functions: its grading context.

``hidden.run_question`` makes one ``Case`` per hidden case and passes it to a test function that
declares a ``case`` parameter (next to the student's functions, which it gets by name). The
case says which policy it is graded under (points.toml's ``[policy]``, docs/contract.md §7) and
collects what it carried forward, which the runner then writes into the case's result. Nothing
here is ambient: a check that needs the policy is handed the case.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..outcomes import Tag


@dataclass(frozen=True)
class Carried:
    """A case right given its callees' results, where some callees' results were wrong; or
    (``raised``) right given right callees, where some callees it called raised, as they do
    on their own."""

    qid: str
    callees: tuple[str, ...]
    raised: bool = False

    @property
    def text(self) -> str:
        who = " and ".join(f"your {c}" for c in self.callees)
        if self.raised:
            verb = "raises" if len(self.callees) == 1 else "raise"
            right = " and ".join(f"a right {c}" for c in self.callees)
            return (
                f"Carried forward: {who} {verb} on the inputs your {self.qid} gives it, and "
                f"your {self.qid} is right given {right}: the mistake is charged once, where "
                "it is."
            )
        verb = "returns" if len(self.callees) == 1 else "return"
        return (
            f"Carried forward: {who} {verb} wrong values here, and your {self.qid} is right "
            f"given them: the mistake is charged once, where it is."
        )

    @property
    def tags(self) -> list[str]:
        return [Tag.CARRIED + c for c in self.callees]


@dataclass
class Case:
    """One hidden case being graded: its policy, and what it carried forward so far."""

    carry_forward: bool = True  # docs/contract.md §7: one bug is charged once
    carried: list[Carried] = field(default_factory=list)

    def carry(self, carried: Carried) -> None:
        if carried not in self.carried:
            self.carried.append(carried)
