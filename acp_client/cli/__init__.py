"""The acp-client command line (placeholder until the entry point lands)."""
