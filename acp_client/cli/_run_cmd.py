"""``acp-client run``: start an agent, send prompts, render the conversation live."""

from __future__ import annotations

import argparse
import sys

from . import EXIT_AGENT_FAILED

__all__ = ["run_command"]


def run_command(args: argparse.Namespace) -> int:
    """Run ``acp-client run`` with parsed arguments; return the exit status."""
    sys.stderr.write("acp-client run: the transport is not available yet\n")
    return EXIT_AGENT_FAILED
