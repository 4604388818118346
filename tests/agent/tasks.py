"""The agent task suite of issue 14: everyday tasks on the reference plan, each with the
calls it needs and the characters of every result it read, against token budgets
(tokens = characters / 4).

The tasks run in order in one session, as one agent would work: each write passes the
``base`` of the answer before it, verbatim. A :class:`Host` is what differs between the
transports: the source the agent names, how a human changes a line meanwhile, and
which tasks the server offers. The measured numbers are kept in ``measured.json`` and
the README's "Working with agents" table is rendered from them (``test_table.py``,
which runs after both suites).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import attrs
from mcp import Client

from tests.conftest import REFERENCE_PLAN

MEASURED = Path(__file__).with_name("measured.json")
"""The numbers the suite measured, by transport and task; refresh them deliberately with
``WERKBAUM_UPDATE_MEASUREMENTS=1`` (and review the diff, like the tools snapshot)."""
UPDATE = "WERKBAUM_UPDATE_MEASUREMENTS"
REFERENCE = REFERENCE_PLAN.read_text(encoding="utf-8")

FIND = "pull-doc cron"
"""Two words of the label of ``#ai.mcp.mirror``."""
DECOMPOSED = "ai.mcp.read"
CHILDREN = [
    "- [ ] #ai.mcp.read.guide: The guide as a resource (XS)",
    "- [ ] #ai.mcp.read.docs: Documents as resources (XS)",
    "- [ ] #ai.mcp.read.meta: Version and checksum in _meta (XS)",
]
CONTESTED = "ai.mcp.auth"
"""The node whose line the human changes while the agent changes its status."""
NEW_PLAN = (
    "[ ] #launch: Launch the beta\n"
    "  - [ ] #launch.docs: Write the getting-started page (S)\n"
    "  - [ ] #launch.invite: Invite the first ten teams (M)\n"
)


@attrs.frozen
class Task:
    name: str
    """The README row."""
    calls: int
    tokens: int | None
    """The budget: at most this many tokens (None: no budget, the guide is what it is)."""
    after: str | None = None
    """The budget counts this earlier task too ("… in all")."""
    files_only: bool = False
    """A stdio-only task (plan files): the HTTP server serves documents only."""


TASKS = (
    Task('what is next, with labels and people (`include: ["stations"]`)', 1, 1_500),
    Task(f'find a node by two words of its label (`find: "{FIND}"`), get its id', 1, 500),
    Task("… then mark it done (`base` and `ref` from that answer)", 1, 800, after="find"),
    Task("decompose a node into three sized children (`lines`): dry run, then write", 2, 2_000),
    Task("overview of the open work (`hideDone: true`)", 1, 6_500),
    Task("… the same without descriptions (`hideDesc: true`)", 1, 2_500),
    Task("the top two levels (`depth: 1`)", 1, 1_500),
    Task("a human changed one line meanwhile: the conflict, then the retry", 2, 1_500),
    Task("get the guide through a tool (`werkbaum_read` of `werkbaum://guide`)", 1, None),
    Task("list the plan files (`werkbaum_list`)", 1, 500, files_only=True),
    Task("create a new plan with a root and two children (`base: null`)", 1, 800, files_only=True),
)
KEYS = (
    "next",
    "find",
    "done",
    "decompose",
    "open work",
    "open brief",
    "depth",
    "conflict",
    "guide",
    "list",
    "create",
)
BY_KEY = dict(zip(KEYS, TASKS, strict=True))


class Host(Protocol):
    """The transport's side of the suite."""

    @property
    def source(self) -> str:
        """The plan's source as the agent names it."""
        ...

    @property
    def files(self) -> bool:
        """Whether the server has plan files (``werkbaum_list``, creating a plan)."""
        ...

    def human_edit(self, marker: str, old: str, new: str) -> None:
        """A person changes ``old`` to ``new`` in the plan's line that holds ``marker``,
        outside the agent (in an editor, or in the browser on the shared document)."""
        ...

    def new_source(self, name: str) -> str:
        """The source for a new plan file ``name``."""
        ...


@attrs.define
class Measured:
    calls: int = 0
    chars: int = 0

    def to_json(self) -> dict[str, int]:
        return {"calls": self.calls, "chars": self.chars}


class Agent:
    """One agent session: calls tools, counts calls and result characters per task, and
    holds the ``base`` of the last answer that had one."""

    def __init__(self, client: Client, host: Host) -> None:
        self.client = client
        self.host = host
        self.base: Any = None
        """The base of the last answer that had one: what the next write passes."""
        self.found: dict[str, Any] = {}
        """The answer of the find task, which the next task acts on."""
        self.measured: dict[str, Measured] = {}
        self._task = ""

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args)
        text = result.content[0].text  # type: ignore[union-attr]
        record = self.measured.setdefault(self._task, Measured())
        record.calls += 1
        record.chars += len(text)
        data: dict[str, Any] = json.loads(text)
        if result.is_error:
            return data
        assert data == result.structured_content, "text and structured content agree"
        if "base" in data:
            self.base = data["base"]
        return data

    async def run(self) -> dict[str, Measured]:
        for key, task in BY_KEY.items():
            if task.files_only and not self.host.files:
                continue
            self._task = key
            await STEPS[key](self)
        return self.measured


# ------------------------------------------------------------------ the tasks


async def what_is_next(agent: Agent) -> None:
    out = await agent.call("werkbaum_inspect", source=agent.host.source, include=["stations"])
    stations = out["stations"]
    assert stations["exact"] is True and len(stations["nodes"]) == 30
    assert all(node["label"] and node["ref"] for node in stations["nodes"])
    assert set(out) == {"base", "stations"}


async def find(agent: Agent) -> None:
    found = await agent.call("werkbaum_inspect", source=agent.host.source, find=FIND)
    assert found["matches"]["total"] == 1
    agent.found = found


async def mark_done(agent: Agent) -> None:
    found = agent.found
    node = found["matches"]["nodes"][0]
    assert node["ref"] == "#ai.mcp.mirror"
    out = await agent.call(
        "werkbaum_set_status",
        source=agent.host.source,
        base=found["base"],
        id=node["ref"],
        status="done",
    )
    assert "+      - [x] #ai.mcp.mirror:" in out["diff"]


async def decompose(agent: Agent) -> None:
    args = {"source": agent.host.source, "parent": DECOMPOSED, "lines": CHILDREN}
    preview = await agent.call("werkbaum_add_node", base=agent.base, dryRun=True, **args)
    assert preview["dryRun"] is True and preview["warnings"]["added"] == []
    out = await agent.call("werkbaum_add_node", base=preview["base"], **args)
    assert out["ops"] == preview["ops"] and out["warnings"]["added"] == []


async def open_work(agent: Agent) -> None:
    out = await agent.call("werkbaum_inspect", source=agent.host.source, hideDone=True)
    assert out["hidden"]["subtrees"] > 0 and out["tree"]


async def open_work_brief(agent: Agent) -> None:
    args = {"source": agent.host.source, "hideDone": True}
    out = await agent.call("werkbaum_inspect", hideDesc=True, **args)
    assert out["hidden"]["subtrees"] > 0 and out["tree"]
    assert '"desc"' not in json.dumps(out)


async def top_levels(agent: Agent) -> None:
    out = await agent.call("werkbaum_inspect", source=agent.host.source, depth=1)
    assert out["cut"]["depth"] == 1
    assert all("children" not in child for top in out["tree"] for child in top["children"])


async def conflict_and_retry(agent: Agent) -> None:
    agent.host.human_edit(f"#{CONTESTED}:", "(S)", "(M)")
    stale = agent.base
    args = {"source": agent.host.source, "id": CONTESTED, "status": "in-progress"}
    refused = await agent.call("werkbaum_set_status", base=stale, **args)
    assert refused["error"]["code"] == "conflict"
    current = refused["error"]["current"]
    assert "(M)" in current["diff"] and "text" not in current
    out = await agent.call("werkbaum_set_status", base=current["base"], **args)
    assert f"[~] #{CONTESTED}:" in out["diff"] and "(M)" in out["diff"]


async def guide(agent: Agent) -> None:
    out = await agent.call("werkbaum_read", source="werkbaum://guide")
    resource = (await agent.client.read_resource("werkbaum://guide")).contents[0]
    assert out == {"text": resource.text, "lines": resource.text.count("\n") + 1}  # type: ignore[union-attr]


async def list_plans(agent: Agent) -> None:
    out = await agent.call("werkbaum_list")
    assert {"source": agent.host.source, "lines": out["plans"][0]["lines"]} in out["plans"]


async def create(agent: Agent) -> None:
    source = agent.host.new_source("launch.werkbaum")
    out = await agent.call("werkbaum_write", source=source, base=None, text=NEW_PLAN)
    assert out["base"]["version"] is None and out["warnings"]["added"] == []


STEPS: dict[str, Callable[[Agent], Awaitable[None]]] = {
    "next": what_is_next,
    "find": find,
    "done": mark_done,
    "decompose": decompose,
    "open work": open_work,
    "open brief": open_work_brief,
    "depth": top_levels,
    "conflict": conflict_and_retry,
    "guide": guide,
    "list": list_plans,
    "create": create,
}


# ------------------------------------------------------------------ budgets and records


def tokens(chars: int) -> int:
    """Tokens as the issue counts them: characters / 4, rounded."""
    return round(chars / 4)


def check_budgets(measured: dict[str, Measured]) -> None:
    for key, record in measured.items():
        task = BY_KEY[key]
        assert record.calls == task.calls, f"{key}: {record.calls} calls"
        if task.tokens is None:
            continue
        chars = record.chars + (measured[task.after].chars if task.after else 0)
        assert chars / 4 <= task.tokens, f"{key}: {chars} characters ≈ {tokens(chars)} tokens"


def recorded() -> dict[str, dict[str, dict[str, int]]]:
    data: dict[str, dict[str, dict[str, int]]] = json.loads(MEASURED.read_text(encoding="utf-8"))
    return data


def record(transport: str, measured: dict[str, Measured]) -> None:
    """Store one transport's numbers in :data:`MEASURED` (one line per task)."""
    data = recorded() if MEASURED.exists() else {}
    data[transport] = {key: m.to_json() for key, m in measured.items()}
    blocks = []
    for name, tasks in sorted(data.items(), reverse=True):  # stdio first
        rows = ",\n".join(f"  {json.dumps(key)}: {json.dumps(m)}" for key, m in tasks.items())
        blocks.append(f" {json.dumps(name)}: {{\n{rows}\n }}")
    MEASURED.write_text("{\n" + ",\n".join(blocks) + "\n}\n", encoding="utf-8")


def settle(transport: str, mode: str, measured: dict[str, Measured]) -> None:
    """Print the numbers, check the budgets, and compare with (or, asked to, refresh)
    :data:`MEASURED` — from the default era's run, the one the README shows."""
    print(report(f"{transport} ({mode})", measured))
    check_budgets(measured)
    if os.environ.get(UPDATE) and mode == "auto":
        record(transport, measured)
    numbers = {key: m.to_json() for key, m in measured.items()}
    assert numbers == recorded()[transport], f"refresh {MEASURED.name} deliberately ({UPDATE}=1)"


def report(transport: str, measured: dict[str, Measured]) -> str:
    """The numbers as the suite prints them (``pytest -s`` shows them)."""
    rows = [f"{transport}: task, calls, characters, ≈ tokens"]
    for key, m in measured.items():
        rows.append(f"  {key:10} {m.calls}  {m.chars:6,}  {tokens(m.chars):5,}")
    return "\n".join(rows)
