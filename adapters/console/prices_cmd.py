"""`gpuplan prices refresh | [CARD] [--json]`: fetch the price feeds once, or show what the
latest snapshot says per card (cheapest on-demand, provider, median, providers, spot, age), or,
before any refresh, the bundled table answers use (and say so). A card whose quotes are all past
the seven-day cut-off stays listed with its date, marked stale: answers no longer use it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime

from bot.prices.figures import CardFigures, card_figures
from bot.prices.market import age_text, when
from bot.prices.offers import provider_name, utc
from bot.prices.snapshot import FeedStatus, Snapshot
from bot.state.prices import open_price_store, refresh_store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "what",
        nargs="*",
        metavar="refresh|CARD",
        help="'refresh' fetches every feed once; a card name shows its quotes",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs

    logs.configure()
    if args.what == ["refresh"]:
        return _refresh()
    return _show(" ".join(args.what), as_json=args.json)


def _refresh() -> int:
    import asyncio

    from bot.prices.feeds import chosen_feeds
    from bot.prices.refresh import refresh

    try:
        feeds = chosen_feeds()
    except ValueError as error:
        print(f"gpuplan prices: {error}", file=sys.stderr)
        return 2
    print(f"Fetching {len(feeds)} price feeds: {', '.join(feed.name for feed in feeds)}")
    store = refresh_store()
    snapshot = asyncio.run(refresh(store, feeds, progress=_progress_line))
    fetched = [status for status in snapshot.feeds if status.name in {f.name for f in feeds}]
    answered = sum(status.ok for status in fetched)
    figures = card_figures(snapshot.offers)
    providers = {p for figure in figures.values() for p in figure.providers}
    implausible = sum(figure.implausible_dropped for figure in figures.values())
    outliers = sum(figure.outliers_dropped for figure in figures.values()) - implausible
    print(
        f"{answered} of {len(fetched)} feeds answered. Snapshot {snapshot.version}: "
        f"{len(snapshot.offers):,} offers, {len(figures)} cards, {len(providers)} providers; "
        f"dropped {implausible} implausible and {outliers} outlier quote(s)."
    )
    if not answered:
        print(
            "No feed answered: answers keep the last good prices"
            + (
                f" (fetched {when(max(o.fetched_at for o in snapshot.offers))})."
                if snapshot.offers
                else "; with none yet, they use the bundled table."
            ),
            file=sys.stderr,
        )
        return 1
    return 0


def _progress_line(status: FeedStatus) -> None:
    if status.ok:
        line = f"  {status.name}: {status.offers:,} offers"
        if status.skipped:
            rows = "row" if status.skipped == 1 else "rows"
            line += f" ({status.skipped:,} {rows} skipped: unknown card, flags or no price)"
        if status.error:
            line += f"; partly failed: {status.error}"
    else:
        line = f"  {status.name}: failed — {status.error}"
        if status.offers and status.fetched_at:
            line += f" (keeping its {status.offers:,} offers from {when(status.fetched_at)})"
    print(line, flush=True)


def _show(card: str, *, as_json: bool) -> int:
    from bot.prices.preferences import env_providers

    store = open_price_store()
    snapshot = store.latest() if store is not None else None
    now = utc(time.time())
    figures = card_figures(snapshot.offers, env_providers(), now) if snapshot else {}
    wanted = None
    if card:
        from planner.catalog.gpus import resolve_gpu

        gpu = resolve_gpu(card)
        if gpu is None:
            print(f"gpuplan prices: unknown card {card!r}", file=sys.stderr)
            return 2
        wanted = gpu.key
        figures = {key: f for key, f in figures.items() if key == gpu.key}
    if snapshot is None:
        return _show_bundled(wanted, as_json=as_json)
    if as_json:
        print(json.dumps(prices_json(figures, snapshot), indent=2))
        return 0
    print(_table(figures, now))
    print(_feeds_line(snapshot))
    if card and not figures:
        print(f"No feed quotes {card} now; answers price it from the bundled table.")
    return 0


def prices_json(figures: dict[str, CardFigures], snapshot: Snapshot | None) -> dict[str, object]:
    """The `gpuplan prices --json` document (a public interface: add keys, never rename)."""
    return {
        "cards": [
            {
                "gpu": gpu,
                "cheapest_usd_per_hour": _usd(f.cheapest.usd_per_gpu_hour if f.cheapest else None),
                "cheapest_provider": provider_name(f.cheapest.provider) if f.cheapest else None,
                "median_usd_per_hour": _usd(f.median_usd_per_hour),
                "providers": len(f.providers),
                "provider_names": [provider_name(p) for p in f.providers],
                "spot_usd_per_hour": _usd(f.spot.usd_per_gpu_hour if f.spot else None),
                "fetched_at": _iso(f.fetched_at),
                "stale": f.stale,
                "source_url": f.cheapest.source_url if f.cheapest else None,
                "dropped": {"implausible": f.implausible_dropped, "outliers": f.outliers_dropped},
            }
            for gpu, f in figures.items()
        ],
        "feeds": [
            {
                "name": status.name,
                "ok": status.ok,
                "offers": status.offers,
                "fetched_at": _iso(status.fetched_at),
                "error": status.error,
                "skipped": status.skipped,
            }
            for status in (snapshot.feeds if snapshot else ())
        ],
        "source": "live",
    }


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _table(figures: dict[str, CardFigures], now: datetime) -> str:
    from planner.catalog.gpus import gpu_by_key

    header = ("card", "cheapest", "provider", "median", "providers", "spot", "age")
    rows = [header]
    for gpu, f in figures.items():
        spec = gpu_by_key(gpu)
        rows.append(
            (
                spec.name.removeprefix("NVIDIA ") if spec else gpu,
                _money(f.cheapest.usd_per_gpu_hour if f.cheapest else None),
                provider_name(f.cheapest.provider) if f.cheapest else "-",
                _money(f.median_usd_per_hour),
                str(len(f.providers)),
                _money(f.spot.usd_per_gpu_hour if f.spot else None),
                age_text((now - f.fetched_at).total_seconds()) + (" (stale)" if f.stale else ""),
            )
        )
    return _columns(rows) + "\n$ per GPU-hour; median across providers; spot = interruptible."


def _columns(rows: list[tuple[str, ...]]) -> str:
    """Rows as aligned text: names left, figures right."""
    header = rows[0]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i in (0, 2) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    return "\n".join(lines)


def _show_bundled(wanted: str | None, *, as_json: bool) -> int:
    """Before any refresh: the bundled, dated table answers use, said to be that."""
    from planner.catalog.gpus import gpu_by_key
    from planner.catalog.prices import price_date_label, price_table

    table = {k: v for k, v in price_table().items() if wanted is None or k == wanted}
    if as_json:
        cards = [
            {
                "gpu": key,
                "cheapest_usd_per_hour": _usd(price.cheapest.usd_per_hour),
                "cheapest_provider": price.cheapest.provider,
                "median_usd_per_hour": _usd(price.median_usd_per_hour),
                "providers": len({quote.provider for quote in price.quotes}),
                "provider_names": sorted({quote.provider for quote in price.quotes}),
                "spot_usd_per_hour": None,
                "fetched_at": price.cheapest.date,
                "stale": False,
                "source_url": price.cheapest.source,
            }
            for key, price in sorted(table.items())
        ]
        print(json.dumps({"cards": cards, "feeds": [], "source": "bundled"}, indent=2))
        return 0
    print(
        "No live prices yet (run `gpuplan prices refresh`): the bundled table answers use, "
        f"{price_date_label()}."
    )
    rows = [("card", "cheapest", "provider", "median", "quotes", "date")]
    for key, price in sorted(table.items()):
        spec = gpu_by_key(key)
        rows.append(
            (
                spec.name.removeprefix("NVIDIA ") if spec else key,
                _money(price.cheapest.usd_per_hour),
                price.cheapest.provider,
                _money(price.median_usd_per_hour),
                str(len(price.quotes)),
                price.cheapest.date,
            )
        )
    print(_columns(rows) + "\n$ per GPU-hour, on-demand; median across the table's quotes.")
    return 0


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _feeds_line(snapshot: Snapshot) -> str:
    parts = []
    for status in snapshot.feeds:
        state = "ok" if status.ok else f"failed ({status.error})"
        parts.append(f"{status.name} {state}")
    return f"Feeds at {when(snapshot.taken_at)}: " + "; ".join(parts) + "."
