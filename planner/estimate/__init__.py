"""What a resolved job needs: memory per GPU (memory/) and time (throughput, post-training)."""
