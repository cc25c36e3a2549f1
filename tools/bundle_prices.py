"""Rebuild planner/data/prices.csv, the bundled price table, from the dated price survey.

    .venv/bin/python tools/bundle_prices.py ../shared/data/gpu_prices_2026-11.csv

Every row of the survey (on-demand, community and spot quotes per GPU-hour, each with its source
URL and date) becomes a row of the package's table, except undated ones (an answer must say
how old its prices are); the survey's research notes stay in the
survey (they are provenance, not something an answer shows), the instance name goes in `notes`.
Rows of the table being replaced are kept only for cards the survey has no quote for ("keep the
old rows only where nothing newer exists"). Cards with no quote at all are listed, one per line,
for planner/data/not_rentable.csv.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from planner.catalog.gpus import GPUS_CSV as CATALOG
from planner.catalog.prices import PRICES_CSV as TABLE

COLUMNS = ("key", "provider", "price_usd_per_hr", "price_kind", "date_of_source", "source", "notes")
# The survey's kinds in the table's words (planner.catalog.prices reads "spot" as interruptible).
KINDS = {"on-demand": "on-demand", "community": "community (on-demand)", "spot": "spot"}


def rebuild(survey: Path) -> list[str]:
    """Write the table; the catalog cards left without a quote."""
    with survey.open(encoding="utf-8", newline="") as handle:
        new = [
            {
                "key": row["key"],
                "provider": row["provider"],
                "price_usd_per_hr": row["price_usd_per_gpu_hr"],
                "price_kind": KINDS[row["price_kind"]],
                "date_of_source": row["date_of_source"],
                "source": row["source_url"],
                "notes": row["instance"],
            }
            for row in csv.DictReader(handle)
            if row["date_of_source"].startswith("20")  # an undated quote cannot say its age
        ]
    surveyed = {row["key"] for row in new}
    with TABLE.open(encoding="utf-8", newline="") as handle:
        old = [row for row in csv.DictReader(handle) if row["key"] not in surveyed]
    rows = sorted([*new, *old], key=lambda row: (row["key"], float(row["price_usd_per_hr"])))
    with TABLE.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({column: row.get(column, "") for column in COLUMNS} for row in rows)
    priced = {row["key"] for row in rows if row["price_kind"] != "spot"}
    with CATALOG.open(encoding="utf-8", newline="") as handle:
        return [row["key"] for row in csv.DictReader(handle) if row["key"] not in priced]


if __name__ == "__main__":
    for key in rebuild(Path(sys.argv[1])):
        print(key)
