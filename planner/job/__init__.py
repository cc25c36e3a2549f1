"""The job types every stage reads: JobSpec (planner.spec, the public JSON), Patch, ResolvedJob."""
