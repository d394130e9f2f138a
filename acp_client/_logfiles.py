"""Which files are logs: a folder named on the command line or to ``summarize_many``.

A folder stands for the files below it that look like stored logs (LOG-FORMATS.md: JSON
lines or one JSON document, gzip or not), hidden files and folders aside; a file named
explicitly is always taken. ``acp-client replay DIR`` and ``acp-client summarize DIR`` both
expand folders here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

__all__ = ["LOG_SUFFIXES", "FoundLogs", "expand_logs", "looks_like_log"]

#: What a stored log is called (LOG-FORMATS.md: JSON lines, or one JSON document), gzip or not.
LOG_SUFFIXES = (".jsonl", ".ndjson", ".jsons", ".json", ".log")
_GZIP_MAGIC = b"\x1f\x8b"


def looks_like_log(path: Path) -> bool:
    """Whether a file found in a folder is taken as a log: by its name and its first bytes.

    Its name ends in one of :data:`LOG_SUFFIXES` (then maybe ``.gz``), and it starts (after
    white space and a byte order mark) with ``{`` or ``[``, or is gzip data.
    """
    name = path.name.lower()
    gz = name.endswith(".gz")
    if not (name.removesuffix(".gz") if gz else name).endswith(LOG_SUFFIXES):
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return True  # unreadable: replayed, so that the error is reported
    if gz:
        return head.startswith(_GZIP_MAGIC)
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return head[:1] in (b"{", b"[")


class FoundLogs(NamedTuple):
    """What the paths named hold: the logs, the files skipped, what could not be read."""

    logs: list[str]
    skipped: list[str]
    unreadable: list[tuple[str, str]]
    """``(path, why)``: a folder that cannot be listed, a link that leads nowhere."""


def expand_logs(logs: list[str]) -> FoundLogs:
    """The logs named: files as given, and the files in folders that look like logs.

    Hidden files and folders (``.git``, ``.cache`` ...) are passed over; a folder that cannot
    be listed and a link that leads nowhere are unreadable (to be reported as a file that
    cannot be read is: issue 26); what is neither a file nor a folder (a FIFO, a socket) is
    skipped, never opened.
    """
    found = FoundLogs([], [], [])
    for item in logs:
        if item != "-" and os.path.isdir(item):
            _walk(item, found)
        else:
            found.logs.append(item)
    return found


def _walk(top: str, found: FoundLogs) -> None:
    def unreadable(exc: OSError) -> None:
        name = exc.filename if isinstance(exc.filename, str) else top
        found.unreadable.append((name, str(exc.strerror or exc)))

    entries: list[str] = []
    for folder, dirs, files in os.walk(top, onerror=unreadable):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        entries += (os.path.join(folder, f) for f in files if not f.startswith("."))
    for name in sorted(entries):
        try:
            mode = os.stat(name).st_mode
        except FileNotFoundError:  # a link to nothing (or a file gone since the listing)
            if os.path.islink(name):
                found.unreadable.append((name, "a link to nothing"))
            continue
        except OSError as exc:  # not even root may look (/proc/1/cwd), a loop of links
            found.unreadable.append((name, str(exc.strerror or exc)))
            continue
        if stat.S_ISREG(mode):
            (found.logs if looks_like_log(Path(name)) else found.skipped).append(name)
        else:
            found.skipped.append(name)
