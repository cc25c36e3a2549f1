"""The market table's rows are runs a person can rent: an offloading job is offered only on
layouts whose host RAM one node of the card offers (issue 28 item 5, as the GPU-count solver)."""

from __future__ import annotations

from planner.catalog.gpus import all_gpus
from planner.estimate.memory.estimate import host_ram_gib
from planner.estimate.memory.host import node_host_ram_gib
from planner.planner import make_plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

# 32B full fine-tune offloaded: its host RAM (hundreds of GiB) exceeds a consumer rental host
# (256 GB) but not a datacenter node (2 TB).
OFFLOADED = {
    "model": "qwen2.5 32b",
    "method": "full",
    "seq_len": 2048,
    "cpu_offload": True,
    "dataset_tokens": 1e8,
}


def test_offloaded_rows_fit_one_node_of_host_ram() -> None:
    spec = JobSpec(**OFFLOADED)
    plan = make_plan(spec)
    job = resolve(spec)
    card_class = {gpu.key: gpu.card_class for gpu in all_gpus()}
    assert plan.options, "a datacenter node holds this job's host RAM"
    for option in plan.options:
        sharding = Sharding(option.sharding) if option.count > 1 else Sharding.none
        needed = host_ram_gib(job, option.count, sharding)
        assert needed <= node_host_ram_gib(card_class[option.gpu]), option.gpu
    consumer = node_host_ram_gib("consumer")
    assert host_ram_gib(job, 1, Sharding.none) > consumer  # the rule is what removed them
    assert all(card_class[o.gpu] != "consumer" for o in plan.options)


def test_without_offload_the_table_is_not_filtered_by_host_ram() -> None:
    plan = make_plan(JobSpec(**{**OFFLOADED, "cpu_offload": False}))
    assert any(o.count > 1 for o in plan.options)


def test_no_offload_suggestion_needs_more_host_ram_than_a_node() -> None:
    # 72B full fine-tune on 8× H100: offloading takes ≈ 2 TiB of host RAM, more than a DGX's 2 TB.
    spec = JobSpec(model="qwen2.5 72b", method="full", gpu="h100", num_gpus=8, dataset_tokens=1e9)
    plan = make_plan(spec)
    offloaded = resolve(JobSpec(**{**spec.model_dump(), "cpu_offload": True}))
    assert host_ram_gib(offloaded, 8, Sharding.fsdp) > node_host_ram_gib("datacenter")
    assert not any(s.patch.get("cpu_offload") for s in plan.suggestions)
    assert not any(s.fits_as_asked for s in plan.suggestions)
