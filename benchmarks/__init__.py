"""Benchmarks for acp_client: ``python -m benchmarks`` (``--help`` for options).

Seeded ACP v2 session logs are generated once and cached under ``benchmarks/.data/``; each
figure runs in its own subprocess and is reported as a ratio against ``msgspec.json.decode`` of
the same lines. See ``benchmarks/_run.py`` for the figures and their targets.
"""
