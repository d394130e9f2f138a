"""Coverage-guided fuzz target (atheris, libFuzzer) for the sans-IO core and the log reader.

Not collected by pytest (the bounded harness is ``tests/test_fuzz.py``). Run it with the
``fuzz`` extra installed, from the repository root::

    mkdir -p /tmp/acp-corpus && cp tests/transcripts/*.jsonl /tmp/acp-corpus
    PYTHONPATH=$PWD .venv/bin/python tests/fuzz_atheris.py -max_total_time=600 /tmp/acp-corpus

(libFuzzer adds the inputs it finds to the corpus folder: never give it ``tests/transcripts``.)

Each input is fed to a live and a passive ``Connection`` (whole, then split in two at a
point the input's first byte chooses: the outcomes must match) and to ``replay_log``. Any
exception but the library's own, or a difference between the two splits, is a crash that
libFuzzer reports with the input that caused it.
"""

from __future__ import annotations

import contextlib
import sys

import atheris

with atheris.instrument_imports(include=["acp_client"]):  # the library's code only
    from fuzzing import LIMITS, feed, outcome, within_limits

    from acp_client import ACPError, replay_log


def one_input(data: bytes) -> None:
    """The target: properties of ``tests/test_fuzz.py`` for one input."""
    cut = data[0] * len(data) // 256 if data else 0
    for live in (True, False):
        whole, events = feed([data], live=live, **LIMITS)
        within_limits(whole, LIMITS)
        split, split_events = feed([data[:cut], data[cut:]], live=live, **LIMITS)
        if outcome(split, split_events) != outcome(whole, events):
            raise AssertionError("the result depends on how the bytes are split")
    with contextlib.suppress(ACPError):
        replay_log(data)


def main() -> None:
    """libFuzzer's command line (``-max_total_time=N``, corpus folders ...)."""
    sys.setrecursionlimit(10_000)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()  # run as a script: tests/ is on sys.path, so ``fuzzing`` imports
