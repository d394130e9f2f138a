# Owns the public face of ACP v1 support (V1-TO-V2.md): the adapter that turns a v1 stream into
# the v2 stream the connection consumes (sections 3 to 9), and v1 detection (section 1.3).
# The implementation lives in the private package `acp_client._v1`.
"""ACP v1 support: translate a v1 agent's traffic into the v2 state model.

A :class:`~acp_client.Connection` talks to a v1 agent on its own (it switches to the adapter
when the agent answers ``initialize`` with protocol version 1, or speaks v1 after claiming
v2), and a replay of a v1 log goes through the same adapter. Use :class:`V1Adapter` directly
to translate a stream of JSON-RPC objects yourself, and :func:`detect_v1` to tell a v1 message
from a v2 one.
"""

from __future__ import annotations

from ._v1.adapter import Direction, V1Adapter
from ._v1.detect import detect_v1, v1_hint
from ._v1.logswitch import AdapterOrigin

__all__ = ["AdapterOrigin", "Direction", "V1Adapter", "detect_v1", "v1_hint"]
