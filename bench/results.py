"""What a section hands to the report: detail tables and goal rows (measured vs target)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Goal:
    """One goal row: ``met`` is None for an informational row without a verdict."""

    goal: str
    measured: str
    target: str
    met: bool | None

    @classmethod
    def time_limit(cls, goal: str, ms: float, limit_ms: float, judged: bool) -> Goal:
        """A time against a limit; ``judged`` False makes it an informational row."""
        target = f"≤ {limit_ms:.0f} ms" if judged else "- (info)"
        return cls(goal, f"{ms:.0f} ms", target, ms <= limit_ms if judged else None)


@dataclass(frozen=True)
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    """A benchmark section's output, in the order it was measured."""

    name: str
    title: str
    tables: list[Table] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
