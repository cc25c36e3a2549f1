"""Where the planner's bundled data files lie (planner/data: catalogs, prices, stack profiles,
units): the one place that builds the path, so every reader and every tool that rewrites a file
agree on it."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
