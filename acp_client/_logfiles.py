"""Which files are logs: a folder named on the command line or to ``summarize_many``.

A folder stands for the files below it that look like stored logs (LOG-FORMATS.md: JSON
lines or one JSON document, gzip or not), hidden files and folders aside; a file named
explicitly is always taken. ``acp-client replay DIR`` and ``acp-client summarize DIR`` both
expand folders here.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["LOG_SUFFIXES", "expand_logs", "looks_like_log"]

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


def expand_logs(logs: list[str]) -> tuple[list[str], list[str]]:
    """The logs named: files as given, and the files in folders that look like logs.

    Returns them with the files of those folders that were skipped.
    """
    out: list[str] = []
    skipped: list[str] = []
    for item in logs:
        path = Path(item)
        if item != "-" and path.is_dir():
            # every file below the folder, but hidden files and folders (.git, .cache ...)
            for found in sorted(path.rglob("*")):
                if not found.is_file() or any(
                    part.startswith(".") for part in found.relative_to(path).parts
                ):
                    continue
                (out if looks_like_log(found) else skipped).append(str(found))
        else:
            out.append(item)
    return out, skipped
