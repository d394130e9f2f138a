"""acp_client.testing: tools for testing ACP clients, acp_client included.

- :class:`FakeAgent` scripts a valid ACP v2 exchange (both directions) and writes it as
  wire bytes or as any stored-log format the replay reader accepts.
- :class:`Loopback` plays such a script into a :class:`~acp_client.Connection`, and
  :class:`ScriptedAgent` is a sans-IO agent that answers a client's bytes (pump it with
  in-memory streams to test a transport).
- :class:`ReferenceModel` is a deliberately simple, independent model of the
  client-state rules (the v2 Preview's too, its opt-ins with ``unstable=``): feed it a
  conversation, compare its ``snapshot()`` with yours.
- :mod:`acp_client.testing.strategies` (needs hypothesis, the ``testing`` extra) has
  hypothesis strategies for content, updates, whole conversations (with the v2 Preview's
  child sessions, session messages, marked replays and keyed retries), chunkings and logs.

Importing this package does not import hypothesis.
"""

from __future__ import annotations

from ._fake_agent import LOG_FORMATS, FakeAgent, StoredLog, log_lines
from ._loopback import Handler, Loopback, ScriptedAgent
from ._model import ReferenceModel

__all__ = [
    "LOG_FORMATS",
    "FakeAgent",
    "Handler",
    "Loopback",
    "ReferenceModel",
    "ScriptedAgent",
    "StoredLog",
    "log_lines",
]
