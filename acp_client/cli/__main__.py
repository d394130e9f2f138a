"""``python -m acp_client.cli``: the ``acp-client`` command."""

from acp_client.cli import main

raise SystemExit(main())
