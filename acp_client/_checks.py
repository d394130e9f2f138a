"""Checks of agent obligations the client can see (ACP-V2-CLIENT-STATE.md 14.2).

Each function returns the problems it finds, as sentences for a diagnostic; the state is
applied as received either way. They run on the rare updates that carry lists (commands,
config options, permission options) and on paths, never on chunks.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from . import _schema as s

__all__ = [
    "command_problems",
    "config_problems",
    "elicitation_problem",
    "option_problems",
    "relative_path",
    "select_values",
]


def _repeated(values: Iterable[Any]) -> list[Any]:
    seen: set[Any] = set()
    twice: list[Any] = []
    for value in values:
        if value in seen and value not in twice:
            twice.append(value)
        seen.add(value)
    return twice


def command_problems(commands: Iterable[Any]) -> Iterator[str]:
    """A29: command names contain no whitespace and are unique."""
    names = [c.name for c in commands if type(c) is s.Command]
    for name in names:
        if any(ch.isspace() for ch in name):
            yield f"command name {name!r} contains whitespace (A29)"
    for name in _repeated(names):
        yield f"command name {name!r} is listed twice (A29)"


def select_values(options: list[dict[str, Any]]) -> list[Any]:
    """The values a select offers, flat or in groups, in order."""
    values: list[Any] = []
    for item in options:
        if "groupId" in item:
            values += [o.get("value") for o in item.get("options") or ()]
        else:
            values.append(item.get("value"))
    return values


def config_problems(options: Sequence[Any]) -> Iterator[str]:
    """A19: a select's ``currentValue`` is one of its values, and values are unique."""
    for option in options:
        if type(option) is not s.SessionConfigSelect:
            continue
        values = select_values(option.options)
        if option.current_value not in values:
            yield (
                f"config option {option.config_id!r}: currentValue {option.current_value!r}"
                " is not one of its values (A19)"
            )
        for value in _repeated(values):
            yield f"config option {option.config_id!r}: value {value!r} is listed twice (A19)"
    for config_id in _repeated(getattr(o, "config_id", None) for o in options):
        if config_id is not None:
            yield f"config option {config_id!r} is listed twice (A19)"


def option_problems(options: Iterable[Any]) -> Iterator[str]:
    """A21: a permission request's ``optionId``s are unique."""
    for option_id in _repeated(getattr(o, "option_id", None) for o in options):
        yield f"permission option {option_id!r} is offered twice (A21)"


def relative_path(path: object) -> bool:
    """A13/A21/A24: a path the agent sent that is not absolute (POSIX or Windows syntax)."""
    return isinstance(path, str) and not (posixpath.isabs(path) or ntpath.isabs(path))


def elicitation_problem(params: Any) -> str | None:
    """What makes ``elicitation/create`` params malformed (answered -32602, 1.8), if anything.

    The schema's shape: a string ``message``, a string ``mode`` (``form`` needs an object
    ``requestedSchema``; ``url`` needs string ``elicitationId`` and ``url``), and exactly one
    scope: a string ``sessionId`` or a ``requestId``.
    """
    if not isinstance(params, dict):
        return "params must be an object"
    if not isinstance(params.get("message"), str):
        return "`message` must be a string"
    mode = params.get("mode")
    if not isinstance(mode, str):
        return "`mode` must be a string"
    if mode == "form" and not isinstance(params.get("requestedSchema"), dict):
        return "a form elicitation needs an object `requestedSchema`"
    if mode == "url" and not (
        isinstance(params.get("elicitationId"), str) and isinstance(params.get("url"), str)
    ):
        return "a url elicitation needs string `elicitationId` and `url`"
    session = "sessionId" in params
    request = "requestId" in params
    if session == request:
        return "exactly one scope is needed: `sessionId` or `requestId`"
    if session and not isinstance(params["sessionId"], str):
        return "`sessionId` must be a string"
    request_id = params.get("requestId")
    if request and (isinstance(request_id, bool) or not isinstance(request_id, int | str)):
        return "`requestId` must be a string or an integer"
    return None
