"""Limits given to the constructors are checked at once, naming the keyword (issue 26).

A limit given as text, a float or ``True`` used to be taken and fail later in the middle of
reading (``'<' not supported between 'str' and 'int'`` from ``receive_data``) or never (a
negative ``max_pending`` refused every request of the agent's).
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_client import Connection, replay_log
from acp_client.logs import LogReader

CONNECTION_LIMITS = [
    ("max_line", 1),
    ("max_batch", 0),
    ("max_sessions", 0),
    ("max_entities", 0),
    ("max_pending", 0),
    ("max_diagnostics", 1),
    ("terminal_limit", 0),
    ("block_limit", 0),
]
READER_LIMITS = ["max_line", "max_document", "max_decompressed", "max_ratio"]


def _kw(name: str, value: Any) -> dict[str, Any]:
    return {name: value}


@pytest.mark.parametrize(("name", "minimum"), CONNECTION_LIMITS)
@pytest.mark.parametrize("bad", ["3", 2.5, True, b"3", [3]])
def test_a_connection_limit_of_another_type_is_a_type_error_naming_it(
    name: str, minimum: int, bad: Any
) -> None:
    with pytest.raises(TypeError, match=f"^{name} must be a whole number"):
        Connection(**_kw(name, bad))


@pytest.mark.parametrize(("name", "minimum"), CONNECTION_LIMITS)
def test_a_connection_limit_below_its_minimum_is_a_value_error_naming_it(
    name: str, minimum: int
) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be {minimum} or more, not {minimum - 1}"):
        Connection(**_kw(name, minimum - 1))
    conn = Connection(**_kw(name, minimum))  # the minimum itself is taken
    assert conn.diagnostics == []


def test_no_terminal_limit_is_none() -> None:
    assert Connection(terminal_limit=None).terminal_limit is None
    assert Connection(block_limit=None).block_limit is None


def test_a_sessions_block_limit_is_checked_too() -> None:
    from acp_client import Session

    with pytest.raises(ValueError, match=r"^block_limit must be 0 or more, not -1"):
        Session("s", block_limit=-1)
    with pytest.raises(TypeError, match=r"^block_limit must be a whole number"):
        Session("s", block_limit="5")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", READER_LIMITS)
def test_a_reader_limit_is_checked_as_the_connections_are(name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be 1 or more, not 0"):
        LogReader(**_kw(name, 0))
    with pytest.raises(TypeError, match=f"^{name} must be a whole number"):
        LogReader(**_kw(name, "64"))
    with pytest.raises(TypeError, match=f"^{name} must be a whole number"):
        replay_log(b"", **_kw(name, 1.5))


@pytest.mark.parametrize("bad", [0, 3, "2", True, 2.0])
def test_replay_log_takes_protocol_1_2_or_none_only(bad: Any) -> None:
    # protocol=7 used to read the log as neither version: no-format-detected, nothing applied
    with pytest.raises(ValueError, match=r"^protocol must be 1, 2 or None"):
        replay_log(b"", protocol=bad)
    assert replay_log(b"", protocol=2).ok


def test_an_agent_connection_checks_max_unsent() -> None:
    from acp_client.transport import AgentConnection

    cases: list[tuple[Any, type[Exception]]] = [("1", TypeError), (0, ValueError)]
    for bad, error in cases:
        with pytest.raises(error, match=r"^max_unsent must"):
            AgentConnection(None, None, max_unsent=bad)
