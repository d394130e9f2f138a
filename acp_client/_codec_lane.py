"""The codec's typed decoders of a stored log's runs of agent notifications (issue 23).

Part of :mod:`acp_client._codec` (which owns every decoder), kept apart for its size: one typed
msgspec pass per record with its message (``acp-client`` / ``python-sdk``, LOG-FORMATS 2;
``capture``, 4) into the message Structs of ``Connection``'s fast path (a ``jsonrpc`` line
is ``_codec.decode_update_line``'s). Used by :mod:`acp_client.logs._lane`.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET

from ._codec import _FastUpdate

__all__ = ["decode_acp_record", "decode_capture_record"]


class _AcpIncoming(msgspec.Struct):
    """An ``acp-client`` / ``python-sdk`` record of an agent notification (LOG-FORMATS 2)."""

    direction: Literal["incoming"]
    message: _FastUpdate
    time: float | msgspec.UnsetType = UNSET


class _CaptureIncoming(msgspec.Struct):
    """A ``capture`` record of an agent notification (LOG-FORMATS 4)."""

    dir: Literal["in"]
    msg: _FastUpdate
    t: float | msgspec.UnsetType = UNSET


decode_acp_record = msgspec.json.Decoder(_AcpIncoming).decode
"""One ``acp-client`` record of a well-formed agent ``session/update``, typed."""

decode_capture_record = msgspec.json.Decoder(_CaptureIncoming).decode
"""One ``capture`` record of a well-formed agent ``session/update``, typed."""
