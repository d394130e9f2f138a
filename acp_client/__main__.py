"""``python -m acp_client``: the ``acp-client`` command (needs the ``cli`` extra to render)."""

from acp_client.cli import main

raise SystemExit(main())
