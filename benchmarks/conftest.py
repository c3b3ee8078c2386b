"""benchmarks/: ``bench_timing`` (what may be asserted under load, what only with LIDGUARD_BENCH_STRICT=1)."""

from __future__ import annotations

import sys
from pathlib import Path

# --import-mode=importlib puts no test folder on sys.path; bench_timing.py lives here.
sys.path.insert(0, str(Path(__file__).resolve().parent))
