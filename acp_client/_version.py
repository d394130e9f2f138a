"""The version of acp_client: one place, read by the build (hatch) and by the code."""

__version__ = "0.1.0"
