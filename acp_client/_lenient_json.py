"""Where the standard-library JSON fallback used to live; it is now in ``_codec``.

:mod:`acp_client._codec` owns every JSON decoder of the package, the fallback for valid
JSON that msgspec refuses included (:func:`~acp_client._codec.decode_leniently`,
:func:`~acp_client._codec.loads`). These names stay importable from here for the modules
that still do (``testing/_loopback.py``); new code imports them from ``_codec``.
"""

from __future__ import annotations

from ._codec import decode_leniently, loads, raw_decode, skip_whitespace

__all__ = ["decode_leniently", "loads", "raw_decode", "skip_whitespace"]
