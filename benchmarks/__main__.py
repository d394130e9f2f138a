"""``python -m benchmarks``: run the benchmarks, or ``--write`` a generated log."""

from ._run import main

raise SystemExit(main())
