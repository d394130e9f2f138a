"""Hypothesis strategies for testing ACP v2 clients (needs the ``testing`` extra).

Values (all valid against the protocol's v2 JSON Schema unless noted; the v2 Preview's
elements are past that 2.4.0 schema):

- :func:`content_blocks` - ContentBlock objects, custom ``_x`` types included.
- :func:`updates` - ``session/update`` payloads of every variant; ``damaged=True`` adds
  the damage lenient decoding must absorb; :func:`damaged_update_pairs` gives
  ``(damaged, clean)`` pairs.
- :func:`conversations` - whole exchanges of a session, valid by construction
  (ACP v2 Preview: ``session_messages=True`` inter-session messages and plan removals,
  ``children=True`` child sessions, ``retries=True`` keyed prompt retries,
  ``replay_markers=True`` replays ending in ``replay_complete`` or not).
- :func:`session_message_traffic` - the Preview's inter-session messages (whole and
  chunked) and plan removals of one session.
- :func:`child_sessions` - the Preview's child sessions of one parent: announcements,
  nested children, association patches and each child's own traffic, interleaved.
- :func:`prompt_echo_interleavings` - the legal orders of a prompt response and its echo.
- :func:`rechunkings`, :func:`chunked_message_updates` - the ways to chunk a message.
- :func:`terminal_byte_splits`, :func:`byte_stream_splits` - the ways to split bytes.
- :func:`v1_streams` - ACP v1 traffic for the v1 adapter.
- :func:`stored_logs` - a conversation written in each stored-log format.

Every strategy validates its arguments when it is built and raises
:class:`hypothesis.errors.InvalidArgument` for bad ones.
"""

from __future__ import annotations

from ._model_state import UPDATE_KINDS
from ._strategies_content import CONTENT_BLOCK_KINDS, content_blocks
from ._strategies_conversations import conversations, stored_logs
from ._strategies_preview import child_sessions, session_message_traffic
from ._strategies_splits import (
    byte_stream_splits,
    chunked_message_updates,
    prompt_echo_interleavings,
    rechunkings,
    terminal_byte_splits,
)
from ._strategies_updates import damaged_update_pairs, updates
from ._strategies_v1 import v1_streams

__all__ = [
    "CONTENT_BLOCK_KINDS",
    "UPDATE_KINDS",
    "byte_stream_splits",
    "child_sessions",
    "chunked_message_updates",
    "content_blocks",
    "conversations",
    "damaged_update_pairs",
    "prompt_echo_interleavings",
    "rechunkings",
    "session_message_traffic",
    "stored_logs",
    "terminal_byte_splits",
    "updates",
    "v1_streams",
]
