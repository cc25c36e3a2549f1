"""Reference data the planner reads: model architectures (and, from engineer B, GPUs and prices)."""
