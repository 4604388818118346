"""The git mirror (spec §8; documents-api §11): a shared document archived as a file in git.

Teams keep their shared plans in git so that the history of a plan sits next
to the code it plans. The documents backend keeps only milestones, so the
mirror is the durable record; it must therefore be exact and honest:

- the file holds the **whole** server text byte for byte (UTF-8, no newline
  translation, no newline added); a committed hand edit is overwritten by the
  next commit, whose diff then shows the deviation, and an *uncommitted* one
  is first kept in a ``git stash`` (index and work tree, message naming the
  document and version), named in the write result (``handEditStash``) and in
  a ``Werkbaum-Hand-Edit`` trailer, so that nothing typed by hand is lost;
- the file is replaced only if it still holds what the mirror read and stashed
  (compared right before the rename: a person's editor takes no lock), and a
  commit that fails (a hook that exits 1) puts the file back only if it still
  holds what the mirror wrote, and drops that stash again once it is back (the
  index gets the new entry only after the commit, so it is as it was);
- runs take turns across processes (:mod:`.lock`: two servers, or a server and
  the cron job, on one repository), and a run never commits a version older
  than the file's last mirror commit archives (it is skipped);
- people's git takes turns with a run as git commands do with each other: the
  run holds git's own ``index.lock`` from its look at the file's index and
  HEAD entries to the new index entry after its commit (milliseconds, plus
  the commit hooks' time), so a person's ``git add`` or ``git commit``
  meanwhile fails with git's usual "index.lock exists" — it can neither land
  between the look and the commit (the commit undid it) nor take the agent's
  plan into the person's commit. The commit reported is the one git made for
  the mirror; HEAD moved under it by plumbing is said in its ``warning``, and
  a text HEAD holds already (someone committed it) is ``unchanged`` with
  ``committedBy``, never put back to an older one;
- while git is in the middle of something — a merge, rebase or bisect, a
  conflict, a detached HEAD, a locked index — the mirror commits nothing and
  touches nothing (``WorkTree.check_committable``), and a conflicted file's
  index stages are never collapsed into one entry;
- only the mirror file is committed (``git commit -- <file>``): whatever else
  the user has staged stays staged and uncommitted;
- the git author stays whoever runs the server: display names are claims, so
  they go into ``Werkbaum-Changed-By`` trailers, never into ``--author`` or
  ``Co-Authored-By`` (which would make ``git blame`` credit an agent with
  humans' lines);
- a mirror failure after an agent write is *reported* in the write result,
  never raised: the document write already happened and must not be hidden.

git runs as a program with arguments (spec §10: no shell), with stdin closed
and its output captured — the stdio server's stdin and stdout carry JSON-RPC,
and neither git nor a commit hook may read from or print into that channel.

Commit message (documents-api §11.3 and the planned ``--with-history`` of
§11.5; choices where the spec is silent are marked *chosen*)::

    Werkbaum-Stand vom 2026-08-27 11:53 — „Titel“ (Version 8, via Claude Code)

    v6 (not in history) · v7 Anna · v8 Claude Code

    Werkbaum-Changed-By: Anna
    Werkbaum-Changed-By: Claude Code
    Werkbaum-Version: 8

- Subject: local time of the fetch; without ``, via …`` for a run without an
  agent write (``werkbaum mirror``, cron).
- Body: the versions after the previous mirror commit's version up to the
  committed one, oldest first, joined by `` · `` and wrapped at 72 columns
  (*chosen*). The lower bound is the ``Werkbaum-Version`` trailer of the most
  recent mirror commit of the file, else the ``(Version <n>`` of an older
  ``pull-doc`` subject (``Werkbaum-Stand vom …``); commits of the file by
  other people are skipped to find it (*chosen*: up to 100). Without any,
  every history entry up to the version is listed. An entry without a name
  is ``v<n> (unnamed)``. Versions the backend's history no longer shows
  (sync versions that were neither a milestone nor the latest, documents-api
  §5.4) are listed as ``v<a>-v<b> (not in history)`` (*chosen*: the body says
  that versions are missing rather than pretending there were none). With no
  new version at all (a hand edit undone, a file committed late) the body
  paragraph is left out (*chosen*).
- Trailers: one ``Werkbaum-Changed-By`` per distinct name in order of first
  appearance — the agent of the subject's ``via`` last if the history no
  longer shows its version (*chosen*: a subject never names an agent the
  trailers lack) — ``Werkbaum-Hand-Edit: kept in git stash <sha>`` if a hand edit
  was stashed, then ``Werkbaum-Version``; always the last paragraph, so
  ``git interpret-trailers --parse`` reads them. Names and the title are
  reduced to one printable line (*chosen*: a newline in a display name could
  otherwise forge a trailer).
"""

from werkbaum_stdio.mirror.git import GitError, WorkTree
from werkbaum_stdio.mirror.message import Fetched, commit_message
from werkbaum_stdio.mirror.sync import (
    Mirror,
    MirrorFiles,
    MirrorOutcome,
    after_write_hook,
    build_mirrors,
    parse_mirror_spec,
)

__all__ = [
    "Fetched",
    "GitError",
    "Mirror",
    "MirrorFiles",
    "MirrorOutcome",
    "WorkTree",
    "after_write_hook",
    "build_mirrors",
    "commit_message",
    "parse_mirror_spec",
]
