"""gpuplan as an MCP server (`gpuplan serve mcp`): the planner's tools for coding agents and
assistants, on the official `mcp` SDK (the `gpuplan[mcp]` extra)."""
