"""The ACP v2 wire format as msgspec Structs (public re-export of ``acp_client._schema``).

Every protocol object has the schema's own name (``ToolCallUpdate``, ``TextContent``,
``StateUpdate`` ...). Omitted fields are ``UNSET``, ``null`` is ``None``; unknown fields
are kept in ``extra``; unknown variants of open unions are kept as raw ``dict`` values.
"""

from ._schema import *  # noqa: F403
from ._schema import __all__ as __all__
