"""`gpuplan doctor slack|discord`: check a bot's set-up in order; name the fix for each fault."""
