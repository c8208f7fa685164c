"""One lesson's record, and memory's settings (notebook 04).

Why a module of its own: the record is what every later lesson reads (the file, the store, retrieval,
the widgets), while ``memory.py`` holds what is done to it. ``generalization_confidence`` is here
because it is part of what a record says about itself: how general the rule has proved.
"""

from dataclasses import dataclass, field

from ralph_mini.lesson_guards import instance_details


@dataclass(frozen=True)
class MemoryConfig:
    """Every tunable of the memory, with the seed's values where it gives them."""

    confirm_threshold: int = 2  # write a rule once proposed in this many separate tasks ...
    calls_saved_threshold: int = 2  # ... or once a single run shows it saves this many calls
    write_after_rejection: bool = True  # ... or at once if reflected from a run the grader rejected
    half_life_days: float = 7.0  # weight halves every week without a hit
    stale_after_days: float = 14.0  # the seed: not hit for two weeks -> down-weighted
    stale_factor: float = 0.5  # ... by this factor
    expire_after_days: float = 30.0  # not retrieved any more (kept, flagged "expired")
    max_failures: int = 2  # failures with the rule in play before it can be removed ...
    vote_half_life: float = 5.0  # ... once recent down-votes outweigh up-votes; a vote halves after 5 more


NO_DECAY = {"half_life_days": 1e9, "stale_after_days": 1e9, "expire_after_days": 1e9}  # the ablation


@dataclass
class Experience:
    """One lesson: the rule text, its tags, and its track record."""

    id: str
    rule: str  # a micro-prompt, canonical form
    task_type: str
    trigger: str  # tag of the trigger condition, e.g. 'query_local_cache:found', 'status:pending'
    tools: list[str]  # tool combination the rule is about
    result: str  # what the rule is for, e.g. 'saves calls'
    failure_reason: str  # the ineffective step that taught it
    created_at: str
    last_hit_at: str
    confirmations: int = 1  # separate tasks that proposed it
    hits: int = 0  # times injected into a prompt
    validations: int = 0  # runs with its whole trigger held that ended correct without its waste
    failures: int = 0  # ... that ended wrong, or wasted calls on a tool it sent the agent to
    calls_saved: int = 0  # best single-run saving seen
    status: str = "candidate"  # candidate | active | expired | removed | invalid
    status_reason: str = ""
    source_tasks: list[str] = field(default_factory=list)
    source_runs: list[str] = field(default_factory=list)
    valid_from: str | None = None  # when it last became active
    invalid_from: str | None = None  # when it was removed or contradicted (None: still holds)
    votes_up: float | None = None  # validations, decayed by later votes (None in an older file:
    votes_down: float | None = None  # ... start from the plain counts)

    def __post_init__(self) -> None:
        if self.votes_up is None:
            self.votes_up = float(self.validations)
        if self.votes_down is None:
            self.votes_down = float(self.failures)

    @property
    def confidence(self) -> float:
        """How general the rule has proved: n / (n + 1) for n = confirming tasks + validated runs, times
        its recent track record (up + 1) / (up + down + 1) in decayed votes. 1 confirmation -> 0.5."""
        record = (self.votes_up + 1) / (self.votes_up + self.votes_down + 1)
        evidence = self.confirmations + self.validations
        return generalization_confidence(self.rule, evidence) * record


def generalization_confidence(rule: str, evidence: int) -> float:
    """0 for a rule naming an instance; else n / (n + 1) for n pieces of evidence (1 -> 0.5, 3 -> 0.75)."""
    if instance_details(rule):
        return 0.0
    return evidence / (evidence + 1)
