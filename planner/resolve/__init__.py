"""JobSpec → ResolvedJob: every default decided, the way most people run, and said."""
