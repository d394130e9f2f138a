"""The view helper of acp_client: a render-ready view model kept in sync from events only.

An editor folds the events a :class:`~acp_client.Connection` returns into a
:class:`ConversationView` and draws its rows; the rules it follows are those of
docs/events.md (entity versions, timeline positions, ranges changed or removed, absolute
offsets), so a view kept this way equals the snapshot after every read. Following a
terminal or a message costs the size of what is new (:meth:`TerminalState.read`,
:meth:`MessageState.content_since`, whose results are :class:`TerminalRead` and
:class:`ContentRead`).

Example::

    from acp_client import Connection
    from acp_client.view import ConversationView

    conn = Connection()
    view = ConversationView(conn)
    for event in conn.receive_data(data):
        view.apply(event)
    for row in view.sessions["s1"].entries:
        draw(row.kind, row.key, row.text, row.fields)
"""

from ._offsets import ContentRead, TerminalRead
from ._view import ConversationView, EntryView, SessionView, TerminalView

__all__ = [
    "ContentRead",
    "ConversationView",
    "EntryView",
    "SessionView",
    "TerminalRead",
    "TerminalView",
]
