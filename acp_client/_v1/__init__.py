# Owns ACP v1 support (V1-TO-V2.md): the adapter (`adapter`, with its rule mixins `core`,
# `updates`, `responses` and its per-session `state`), the pure value translations
# (`translate`, `gitpatch`), v1 detection (`detect`) and the protocol switch (`switch`) the
# connection uses to talk to a v1 agent. The public names are in `acp_client.v1`.
"""Private: ACP v1 support (V1-TO-V2.md). Import the public names from ``acp_client.v1``."""
