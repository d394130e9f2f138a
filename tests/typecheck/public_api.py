"""What a user's type checker sees of the public API (checked by ``mypy --strict`` in CI).

Never run: ``assert_type`` fails the type check, not a test, when a public type regresses
to ``Any`` or to something a UI cannot use.
"""

from __future__ import annotations

from typing import Any, assert_type

from acp_client import (
    Connection,
    FailedRequest,
    ListView,
    PermissionState,
    Role,
    Session,
    SessionSummary,
    TerminalState,
    TimelineEntry,
    replay_log,
    summarize_many,
)
from acp_client import schema as s
from acp_client.events import Event, MessageChunkAppended
from acp_client.transport import AgentConnection, PromptHandle


def views(session: Session) -> None:
    """The read-only views are typed by what they hold."""
    assert_type(session.timeline, ListView[TimelineEntry])
    assert_type(session.timeline[0], TimelineEntry)
    assert_type(session.timeline[1:], list[TimelineEntry])
    assert_type(session.unretained, ListView[TimelineEntry])
    assert_type(session.completed_turns, ListView[str | None])
    assert_type(session.permission_requests, ListView[PermissionState])
    for perm in session.permission_requests:
        assert_type(perm.request, s.RequestPermissionRequest | dict[str, Any])
        if isinstance(perm.request, s.RequestPermissionRequest):
            assert_type(perm.request.options, list[s.PermissionOption])
    assert_type(session.notices, ListView[s.Notice])
    assert_type(session.unknown_updates, ListView[dict[str, Any]])
    message = session.message("agent", "m1")
    if message is not None:
        assert_type(message.content, ListView[s.ContentBlock])
        assert_type(message.text(), str)
    for entry in session.timeline:
        assert_type(entry, TimelineEntry)
        assert_type(entry.truncated_blocks, int)  # what the block limit dropped
    conn = Connection(block_limit=1000, terminal_limit=1 << 20)
    assert_type(conn.block_limit, int | None)


def events(event: MessageChunkAppended, session: Session) -> None:
    """An event's role feeds the views without a cast."""
    assert_type(event.role, Role)
    session.message(event.role, event.message_id)


def replay() -> None:
    """A replay's refused requests."""
    result = replay_log(b"")
    assert_type(result.failed_requests, list[FailedRequest])
    assert_type(result.snapshot(), dict[str, Any])
    assert_type(Connection().receive_data(b""), list[Event])
    restored = Connection.restore(result.snapshot(), live=False)
    assert_type(restored, Connection)
    assert_type(restored.prompt(0).outcome_unknown, bool)


async def live(agent: AgentConnection) -> None:
    """The trio layer."""
    assert_type(await agent.initialize(), s.InitializeResponse)
    handle = await agent.prompt("s1", "hi")
    assert_type(handle, PromptHandle)
    assert_type(await handle.wait_done(), str | None)
    with agent.events() as stream:
        async for item in stream:
            assert_type(item, Event)


def view(conn: Connection, event: MessageChunkAppended, terminal: TerminalState) -> None:
    """The view helper and the deltas (docs/events.md)."""
    from acp_client.view import ContentRead, ConversationView, EntryView, TerminalRead

    shown = ConversationView(conn)
    shown.apply(event)
    for row in shown.sessions["s1"].entries:
        assert_type(row, EntryView)
        assert_type(row.text, str)
    assert_type(event.version, int)
    assert_type(event.block.type, str | Any)  # known: a str; unknown: its "type"
    assert_type(terminal.read(since=0), TerminalRead)
    assert_type(terminal.read(0).data, bytes)
    message = conn.session("s1").message("agent", "m1")
    if message is not None:
        assert_type(message.content_since(0), ContentRead)


def fleet() -> None:
    """Summary rows are typed field by field."""
    rows = summarize_many(["logs/"], jobs=2)
    assert_type(rows, list[SessionSummary])
    assert_type(rows[0].stop_reasons, dict[str, int])
    assert_type(rows[0].session_id, str | None)
    assert_type(rows[0].first_time, float | None)
    assert_type(rows[0].complete, bool)
