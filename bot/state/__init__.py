"""The bot's state: one backend (the SQLite state file, or Redis when GPUPLAN_STATE_URL names one;
memory for one-off answers) chosen in bot.state.backend, and a thin typed store per kind of thing
kept on it: threads, rate limits, button patches, settings, run reports, price snapshots and
delivery de-duplication. bot.state.errors is where a backend's failures become "store
unavailable"."""
