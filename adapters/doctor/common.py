"""Checks every platform shares: the state store takes a write, and how old the prices are."""

from __future__ import annotations

import sqlite3
from datetime import date

import aiohttp

from adapters.doctor.report import Check, fail, ok, warn

# What a request that got no usable answer raises: refused, DNS, TLS, a dropped connection, time.
NETWORK_ERRORS = (aiohttp.ClientError, OSError, TimeoutError)

# The doctor writes this one thread (with no jobs) to prove the store takes writes.
PROBE_KEY = "gpuplan-doctor:probe"
# Older than this, the bundled quotes are likely off by more than the spread between providers.
STALE_PRICES_DAYS = 180


def state_store() -> Check:
    """Save to the store GPUPLAN_STATE_URL selects, through the interface the bot saves with."""
    from bot.state.backend import StateUrlError, backend_from_env
    from bot.state.errors import StoreUnavailable
    from bot.state.threads import open_thread_store

    name = "state store"
    try:
        backend = backend_from_env()
    except StateUrlError as error:
        return fail(name, str(error), "fix or unset GPUPLAN_STATE_URL")
    if backend.redis_url is None:
        fix = (
            "set GPUPLAN_STATE_DIR to a directory this user can write (threads, Slack thread "
            "links and installs live there)"
        )
    else:
        fix = "start Redis, or point GPUPLAN_STATE_URL at one this machine reaches"
    try:
        store = open_thread_store()
        state = store.load(PROBE_KEY)
        store.save(PROBE_KEY, [], state.version)  # losing a race to another writer also proves it
    except (OSError, sqlite3.Error, StoreUnavailable) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return fail(name, f"cannot write to {backend.describe()}: {reason}", fix)
    return ok(name, f"{backend.describe()} takes writes")


def prices(today: date | None = None) -> Check:
    """How old the prices in use are: the live feeds' latest snapshot when a refresh has run,
    else the newest quote of the bundled, dated table (plus any GPUPLAN_PRICES override)."""
    from planner.catalog.prices import PRICES_ENV, price_date_label, price_table, quote_day
    from planner.errors import PlanningError

    try:
        table = price_table()
        label = price_date_label()
    except PlanningError as error:
        return fail("prices", error.message, f"fix or unset {PRICES_ENV}")
    if (live := _live_prices()) is not None:
        return live
    dates = [quote_day(quote.date) for card in table.values() for quote in card.quotes]
    known = [day for day in dates if day is not None]
    if not known:
        return warn("prices", f"{label}: no quote says when it was taken")
    age_days = ((today or date.today()) - max(known)).days
    detail = f"bundled table, {label}; the newest is {age_days} days old (no live feeds yet)"
    if age_days > STALE_PRICES_DAYS:
        return warn("prices", detail, f"put your own quotes in a CSV named by {PRICES_ENV}")
    return ok("prices", detail)


def _live_prices() -> Check | None:
    """The latest snapshot's feeds and age; None before the first refresh."""
    import time

    from bot.prices.market import STALE_AFTER, age_text, when
    from bot.prices.offers import utc
    from bot.state.prices import open_price_store

    store = open_price_store()
    snapshot = store.latest() if store is not None else None
    if snapshot is None:
        return None
    fix = "run `gpuplan prices refresh` and read its per-feed lines"
    if not snapshot.any_ok:  # the last refresh failed: answers serve older prices, or none
        errors = "; ".join(f"{s.name}: {s.error}" for s in snapshot.feeds)
        return fail("prices", f"the last refresh ({when(snapshot.taken_at)}) failed: {errors}", fix)
    if not snapshot.offers:
        return None
    newest = max(offer.fetched_at for offer in snapshot.offers)
    age = utc(time.time()) - newest
    providers = len({offer.provider for offer in snapshot.offers})
    feeds = "; ".join(f"{s.name} {'ok' if s.ok else 'failed'}" for s in snapshot.feeds)
    detail = (
        f"live feeds: {len(snapshot.offers):,} offers from {providers} providers, newest fetched "
        f"{age_text(age.total_seconds())} ({when(newest)}); {feeds}"
    )
    if age > STALE_AFTER or not all(s.ok for s in snapshot.feeds):
        return warn("prices", detail, fix)
    return ok("prices", detail)


def unreachable(name: str, where: str, error: Exception, fix: str) -> Check:
    return fail(name, f"no answer from {where}: {str(error) or type(error).__name__}", fix)
