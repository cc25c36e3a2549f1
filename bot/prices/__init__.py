"""Live market prices: feed fetchers, normalised offers, snapshots in the state store, per-card
figures and the scheduled refresh. Everything here may do I/O; the planner only ever receives the
resulting per-card prices as data (planner.catalog.prices.PriceBook).

Import the submodules you need: `bot.prices.feeds.*` pull in aiohttp, the rest does not.
"""
