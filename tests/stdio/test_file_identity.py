"""What a write keeps of a plan file beyond its bytes (round 26, attack-files F1, F2).

A write puts a new file in place of the plan (a rename), so everything the old inode
carried besides its bytes and mode is gone unless the store copies it: the group a team
shares the plan through, a POSIX ACL that lets a colleague write it, extended attributes
that tools keep on it. A person who set these expects them to stay when an agent changes
a line: after round 25 every write dropped the ACL and the attributes, and a server
running as a user other than root gave the file its user's primary group (a teammate
in the plan's group lost write access with the agent's first write).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    PLAN,
    plan_file,
    root_fixture,
    store_fixture,
)
from werkbaum_core import ForbiddenSource, SourceUnavailable, WerkbaumError
from werkbaum_stdio.confined import walk
from werkbaum_stdio.files import FileStore, replace_file
from werkbaum_stdio.roots import Roots

AGENT = PLAN + "  - [ ] #agent: Added by the agent (XS)\n"
ACL_ACCESS = "system.posix_acl_access"
ACL_DEFAULT = "system.posix_acl_default"
ATTRIBUTE = "user.werkbaum-test.origin"
COLLEAGUE = 4321
TEAM = 2345
SERVER_USER = 1234

# POSIX ACL xattr format (linux/posix_acl_xattr.h): version 2, then (tag, perm, id) entries.
_USER_OBJ, _USER, _GROUP_OBJ, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF


def acl(user: int, perm: int) -> bytes:
    """An access ACL for mode 0664 that also lets ``user`` have ``perm``."""
    entries = [
        (_USER_OBJ, 6, _UNDEFINED),
        (_USER, perm, user),
        (_GROUP_OBJ, 6, _UNDEFINED),
        (_MASK, 6, _UNDEFINED),
        (_OTHER, 4, _UNDEFINED),
    ]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


def set_or_skip(path: Path, name: str, value: bytes) -> None:
    try:
        os.setxattr(path, name, value)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip(f"{name} is not supported on this file system")
        raise


def test_a_write_keeps_the_acl_and_the_extended_attributes(store: FileStore, root: Path) -> None:
    path = plan_file(root)
    path.chmod(0o664)
    set_or_skip(path, ATTRIBUTE, b"https://example.org/plan")
    set_or_skip(path, ACL_ACCESS, acl(COLLEAGUE, 6))
    before = {name: os.getxattr(path, name) for name in os.listxattr(path)}
    base = store.read("plan.werkbaum").base
    store.write("plan.werkbaum", base, [], AGENT)
    assert path.read_text(encoding="utf-8") == AGENT
    after = {name: os.getxattr(path, name) for name in os.listxattr(path)}
    assert after == before  # the colleague may still write it; the attribute is still there
    assert stat.S_IMODE(path.stat().st_mode) == 0o664


def test_a_plan_without_an_acl_does_not_get_the_folders_default_acl(
    store: FileStore, root: Path
) -> None:
    """The plan keeps what it had: a default ACL set on its folder afterwards is for new
    files; the plan is not a new file to the person, however the store replaces it."""
    path = plan_file(root)
    set_or_skip(root, ACL_DEFAULT, acl(COLLEAGUE, 7))
    assert ACL_ACCESS not in os.listxattr(path)
    base = store.read("plan.werkbaum").base
    store.write("plan.werkbaum", base, [], AGENT)
    assert ACL_ACCESS not in os.listxattr(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.fixture(name="team_dir")
def team_dir_fixture() -> Iterator[Path]:
    """A folder a server user may reach: under /tmp, not under the root-only pytest dir."""
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    top = Path(tempfile.mkdtemp(prefix="werkbaum-team-", dir="/tmp"))
    top.chmod(0o755)
    try:
        yield Path(os.path.realpath(top))
    finally:
        shutil.rmtree(top)


def write_as(
    user: int,
    groups: list[int],
    root: Path,
    action: Callable[[FileStore], object] | None = None,
) -> dict[str, Any] | None:
    """Write the plan (or do ``action`` with the store) in a forked child running as
    ``user`` (primary group ``user``, supplementary ``groups``, no capabilities): None if
    it was done, else the error's body (``code``, ``message``, ``reason`` …)."""
    warm = FileStore(Roots.from_args([str(root)], env={}, cwd=root))
    warm.read("plan.werkbaum")  # every module the write needs is imported before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(read)
        answer: dict[str, Any] = {"code": "crashed"}
        try:
            os.setgroups(groups)
            os.setgid(user)
            os.setuid(user)
            store = FileStore(Roots.from_args([str(root)], env={}, cwd=root))
            try:
                if action is None:
                    base = store.read("plan.werkbaum").base
                    store.write("plan.werkbaum", base, [], AGENT)
                else:
                    action(store)
                answer = {"code": "ok"}
            except WerkbaumError as exc:
                answer = exc.to_json()["error"]
        finally:
            os.write(write, json.dumps(answer).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        body: dict[str, Any] = json.loads(pipe.read())
    os.waitpid(pid, 0)
    return None if body == {"code": "ok"} else body


def owned_plan(
    folder: Path, folder_mode: int, owner: tuple[int, int], mode: int, *, folder_too: bool = False
) -> Path:
    """A new folder with a plan of ``owner`` (uid, gid) and ``mode``; with ``folder_too`` the
    folder is theirs as well (else it stays the test's)."""
    folder.mkdir()
    if folder_too:
        os.chown(folder, *owner)
    folder.chmod(folder_mode)
    path = plan_file(folder)
    os.chown(path, *owner)
    path.chmod(mode)
    return path


def team_plan(team: Path, owner: int) -> Path:
    """A folder ``team`` (0775) with a plan (0664), both ``owner``'s and of the group TEAM."""
    return owned_plan(team, 0o775, (owner, TEAM), 0o664, folder_too=True)


def test_a_plan_shared_through_its_group_keeps_the_group(team_dir: Path) -> None:
    """The server's user writes a plan of the team's group, in a folder of that group: the
    new file keeps the group (the user is in it), so the team can still write the plan."""
    team = team_dir / "team"
    path = team_plan(team, SERVER_USER)
    assert write_as(SERVER_USER, [SERVER_USER, TEAM], team) is None
    assert path.read_text(encoding="utf-8") == AGENT
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (SERVER_USER, TEAM, 0o664)


def test_a_set_id_plan_of_another_user_does_not_become_a_set_id_file_of_the_server(
    team_dir: Path,
) -> None:
    """Another user's plan with the set-user-ID and set-group-ID bits, writable by all, in a
    folder writable by all: the server's user writes it. The new file is that user's (a
    rename makes a new file), so with the old mode it was a set-ID program of the server's
    user holding the text an agent wrote — what a write by that user clears in the kernel."""
    shared = team_dir / "shared"
    path = owned_plan(shared, 0o777, (COLLEAGUE, COLLEAGUE), 0o6777)
    assert write_as(SERVER_USER, [SERVER_USER], shared) is None
    assert path.read_text(encoding="utf-8") == AGENT
    info = path.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (SERVER_USER, 0o777)


def test_root_keeps_the_owner_and_drops_the_set_id_bits(store: FileStore, root: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give the file another owner")
    path = plan_file(root)
    os.chown(path, COLLEAGUE, TEAM)
    path.chmod(0o6755)
    base = store.read("plan.werkbaum").base
    store.write("plan.werkbaum", base, [], AGENT)
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (COLLEAGUE, TEAM, 0o755)


# --- plans the server's user cannot replace: the error says why (round 26, F4, F5) -----------


def test_a_plan_of_another_user_in_a_sticky_folder_is_refused_as_such(team_dir: Path) -> None:
    """In a folder like /tmp (mode 1777) only a file's owner may replace it: the kernel
    refused the swap, and the agent got "Operation not permitted" after the store had
    written the whole temp file."""
    sticky = team_dir / "sticky"
    path = owned_plan(sticky, 0o1777, (COLLEAGUE, COLLEAGUE), 0o666)
    error = write_as(SERVER_USER, [SERVER_USER], sticky)
    assert error is not None
    assert (error["code"], error["reason"]) == ("forbidden_source", "read_only")
    assert "sticky" in error["message"] and f"uid {COLLEAGUE}" in error["message"]
    assert path.read_text(encoding="utf-8") == PLAN
    assert sorted(p.name for p in sticky.iterdir()) == ["plan.werkbaum"]


@pytest.fixture(name="bind_mounted")
def bind_mounted_fixture(root: Path) -> Iterator[Path]:
    """``root/plan.werkbaum`` with another file bind-mounted onto it, as ``docker run -v
    ./plan.werkbaum:/work/plan.werkbaum`` mounts a single file into a container."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a bind mount needs root")
    path = plan_file(root)
    source = plan_file(root.parent, PLAN, "mounted.werkbaum")
    done = subprocess.run(["mount", "--bind", str(source), str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mount --bind: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_a_bind_mounted_plan_says_it_cannot_be_replaced(
    store: FileStore, root: Path, bind_mounted: Path
) -> None:
    """The rename over a mount point fails with EBUSY: "Device or resource busy" told the
    agent and the person nothing they could act on."""
    base = store.read("plan.werkbaum").base
    with pytest.raises(SourceUnavailable) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    assert info.value.details["reason"] == "mount_point"
    assert "mount its folder" in info.value.message
    assert bind_mounted.read_text(encoding="utf-8") == PLAN
    assert sorted(p.name for p in root.iterdir()) == ["plan.werkbaum"]


# --- a root below a folder one may pass through but not list (round 26, F14) ------------------


def test_a_root_below_a_folder_that_cannot_be_listed_is_served(team_dir: Path) -> None:
    """``/home`` with mode 0711 (so users cannot list each other's homes, as on shared hosts):
    its users may pass through it. The store opened every folder from ``/`` to the root
    for reading, and every call of a server running as such a user failed: "the root …
    cannot be opened (Permission denied)"."""
    home = team_dir / "home"
    project = home / "bob" / "project"
    project.mkdir(parents=True)
    plan_file(project)
    for folder in (home / "bob", project):
        os.chown(folder, SERVER_USER, SERVER_USER)
    os.chown(project / "plan.werkbaum", SERVER_USER, SERVER_USER)
    home.chmod(0o711)
    assert write_as(SERVER_USER, [SERVER_USER], project) is None
    assert (project / "plan.werkbaum").read_text(encoding="utf-8") == AGENT
    # A plan folder of its own that cannot be listed: a create, and its dry run, say so.
    hidden = project / "hidden"
    hidden.mkdir(mode=0o311)
    hidden.chmod(0o311)
    os.chown(hidden, SERVER_USER, SERVER_USER)
    for action in (
        lambda store: store.check_new("hidden/new.werkbaum"),
        lambda store: store.create("hidden/new.werkbaum", PLAN),
    ):
        error = write_as(SERVER_USER, [SERVER_USER], project, action)
        assert error is not None and error["reason"] == "unlistable", error


def test_the_git_mirrors_replace_keeps_the_acl_and_attributes_too(root: Path) -> None:
    """:func:`replace_file` writes a ``--mirror`` file the way the store writes a plan; it
    dropped the ACL and attributes as well (round 26 attack-files F2)."""
    path = plan_file(root)
    path.chmod(0o664)
    set_or_skip(path, ATTRIBUTE, b"https://example.org/plan")
    set_or_skip(path, ACL_ACCESS, acl(COLLEAGUE, 6))
    before = {name: os.getxattr(path, name) for name in os.listxattr(path)}
    roots = Roots.from_args([str(root)], env={}, cwd=root)
    with walk(roots, root, ["plan.werkbaum"], "plan.werkbaum", follow=True) as place:
        replace_file(place, AGENT.encode(), "plan.werkbaum", None)
    assert path.read_text(encoding="utf-8") == AGENT
    assert {name: os.getxattr(path, name) for name in os.listxattr(path)} == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o664


def test_a_plan_an_acl_keeps_the_server_user_from_writing_is_refused(team_dir: Path) -> None:
    """Round 26 attack-files F15: an ACL entry that gives the server's user read access only
    (``user:1234:r--``) on a plan of the team (``1111:2345``, 0664; the user in 2345): the
    user's shell cannot write it, but the store judged from the mode bits alone and
    replaced it — the new file the user's own, the ACL no longer binding it."""
    team = team_dir / "team"
    path = team_plan(team, COLLEAGUE)
    set_or_skip(path, ACL_ACCESS, acl(SERVER_USER, 4))
    error = write_as(SERVER_USER, [SERVER_USER, TEAM], team)
    assert error is not None
    assert (error["code"], error["reason"]) == ("forbidden_source", "read_only")
    assert path.read_text(encoding="utf-8") == PLAN
    assert path.stat().st_uid == COLLEAGUE


@pytest.fixture(name="read_only_mount")
def read_only_mount_fixture(tmp_path: Path) -> Iterator[Path]:
    """A folder with a plan, mounted read-only elsewhere (``docker run -v …:ro``)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a bind mount needs root")
    source, target = tmp_path / "source", tmp_path / "ro"
    source.mkdir()
    target.mkdir()
    plan_file(source)
    done = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(source), str(target)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"mount: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield Path(os.path.realpath(target))
    finally:
        subprocess.run(["umount", str(target)], check=True)


def test_a_plan_on_a_read_only_file_system_is_refused_as_such(read_only_mount: Path) -> None:
    """Round 26 attack-files O5/F16: the store wrote the temp file first and then said
    "Read-only file system" (source_unavailable); it is the person's no, as a read-only
    mode is."""
    store = FileStore(Roots.from_args([str(read_only_mount)], env={}, cwd=read_only_mount))
    base = store.read("plan.werkbaum").base
    with pytest.raises(ForbiddenSource) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    assert info.value.details["reason"] == "read_only"
    assert "read-only file system" in info.value.message
    for create in (
        lambda: store.create("new.werkbaum", PLAN),
        lambda: store.check_new("new.werkbaum"),
    ):
        with pytest.raises(ForbiddenSource) as info:
            create()
        assert "read-only file system" in info.value.message


def test_an_immutable_plan_is_refused_as_such(store: FileStore, root: Path) -> None:
    """``chattr +i`` (or ``+a``): even root may not replace it; the store found out at the
    swap, after writing the temp file ("Operation not permitted")."""
    path = plan_file(root)
    if shutil.which("chattr") is None:
        pytest.skip("no chattr")
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not allowed here")
    try:
        base = store.read("plan.werkbaum").base
        with pytest.raises(ForbiddenSource) as info:
            store.write("plan.werkbaum", base, [], AGENT)
        assert info.value.details["reason"] == "read_only"
        assert "chattr" in info.value.message
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    assert path.read_text(encoding="utf-8") == PLAN
