"""The codec's typed decoders of a stored log's runs of agent notifications (issue 23).

Part of :mod:`acp_client._codec` (which owns every decoder), kept apart for its size: one typed
msgspec pass over a whole run of ``session/update`` lines (``jsonrpc``), or of records with
their message (``acp-client`` / ``python-sdk``, LOG-FORMATS 2; ``capture``, 4), into the
message Structs of ``Connection``'s fast path. Used by :mod:`acp_client.logs._lane`.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET

from ._codec import _FastUpdate

__all__ = ["decode_acp_records", "decode_capture_records", "decode_update_batch"]

decode_update_batch = msgspec.json.Decoder(list[_FastUpdate]).decode
"""A JSON array of well-formed ``session/update`` notifications (a whole read), typed."""


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


decode_acp_records = msgspec.json.Decoder(list[_AcpIncoming]).decode
"""A JSON array of ``acp-client`` records of well-formed agent ``session/update``s, typed."""

decode_capture_records = msgspec.json.Decoder(list[_CaptureIncoming]).decode
"""A JSON array of ``capture`` records of well-formed agent ``session/update``s, typed."""
