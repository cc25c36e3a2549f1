"""Slack renderer contract: Block Kit Slack accepts (slack_sdk models + our limit checks), mrkdwn
escaping of everything, and oversize replies split rather than rejected."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.slack import limits
from adapters.slack.escape import escape_mrkdwn, incoming_to_plain, truncate_escaped
from adapters.slack.render import conversation_id_from_block_id, render_reply
from bot.reply import MemoryLine, Reply, WhatIf
from tests.fakes.slack_api import payload_problems
from tests.replies import card_row

WHATIFS = [
    WhatIf(id="ctx8k", label="8k ctx", text="what if 8k ctx?"),
    WhatIf(id="gpus2", label="2 GPUs", text="what if 2 GPUs?"),
    WhatIf(id="cheapest", label="Cheapest", text="what's the cheapest?"),
    WhatIf(id="qlora", label="QLoRA", text="what if QLoRA?"),
]


def _plan_reply(**overrides) -> Reply:
    fields = {
        "kind": "plan",
        "title": "Llama-2-13B QLoRA, 4k ctx",
        "verdict": "Fits on one 24 GB card",
        "required_gib": 14.2,
        "range_gib": (12.8, 15.9),
        "memory": [
            MemoryLine(component="weights", gib=6.9),
            MemoryLine(component="activations", gib=4.1),
        ],
        "table": [
            card_row(
                headroom_gib=8.3, hours=11.5, cost_usd=4.6, cost_usd_median=6.1, usd_per_hour=0.4
            ),
            card_row(
                "H100 SXM 80GB",
                headroom_gib=64.0,
                hours=3.2,
                cost_usd=7.9,
                cost_usd_median=9.0,
                usd_per_hour=2.49,
                highlight="fastest",
            ),
        ],
        "recommendation": ["1× RTX 4090 is cheapest at $4.60"],
        "assumptions": ["13B read as Llama-2-13B", "micro batch 1"],
        "price_date": "2026-11-01",
        "whatifs": WHATIFS,
    }
    return Reply(**{**fields, **overrides})


def _all_blocks(payloads: list[dict]) -> list[dict]:
    return [block for payload in payloads for block in payload["blocks"]]


def test_plan_renders_header_verdict_memory_table_context_and_buttons() -> None:
    (payload,) = render_reply(_plan_reply(), conversation_id="1700000000.000100")
    assert payload_problems(payload) == []
    assert payload["text"].startswith("Llama-2-13B QLoRA, 4k ctx: Fits")
    types = [b["type"] for b in payload["blocks"]]
    assert types[0] == "header" and types[-1] == "actions" and "context" in types
    wire = json.dumps(payload, ensure_ascii=False)
    assert "*Memory per GPU: 14.2 GiB* (range 12.8–15.9 GiB)" in wire
    fields = [f["text"] for b in payload["blocks"] for f in b.get("fields", [])]
    assert fields == ["*weights*\n6.9 GiB", "*activations*\n4.1 GiB"]
    (table,) = [b for b in payload["blocks"] if b.get("text", {}).get("text", "").startswith("```")]
    lines = table["text"]["text"].split("\n")
    assert lines[1].split()[:3] == ["card", "fit", "free"]
    assert "1× RTX 4090" in lines[2] and "cheapest" in lines[2] and "$4.60" in lines[2]
    context = [
        e["text"] for b in payload["blocks"] if b["type"] == "context" for e in b["elements"]
    ]
    assert "Assumed: 13B read as Llama-2-13B" in context and "Prices as of 2026-11-01" in context
    buttons = payload["blocks"][-1]["elements"]
    assert [(b["action_id"], b["text"]["text"], b["value"]) for b in buttons] == [
        ("whatif:ctx8k", "8k ctx", "what if 8k ctx?"),
        ("whatif:gpus2", "2 GPUs", "what if 2 GPUs?"),
        ("whatif:cheapest", "Cheapest", "what's the cheapest?"),
        ("whatif:qlora", "QLoRA", "what if QLoRA?"),
    ]
    block_id = payload["blocks"][-1]["block_id"]
    assert conversation_id_from_block_id(block_id) == "1700000000.000100"


def test_changes_of_a_whatif_are_shown_first() -> None:
    (payload,) = render_reply(_plan_reply(changes=["seq_len 4096 → 8192"]))
    assert payload["blocks"][1]["text"]["text"] == "*What changed*\n• seq_len 4096 → 8192"


def test_user_text_is_escaped_everywhere_so_nobody_is_pinged() -> None:
    hostile = "<!everyone> <!channel> <@U123> <https://evil.example|click> & co"
    reply = _plan_reply(
        title=hostile,
        verdict=hostile,
        body=hostile,
        assumptions=[hostile],
        suggestions=[hostile],
        memory=[MemoryLine(component=hostile, gib=1.0)],
    )
    for payload in render_reply(reply):
        assert payload_problems(payload) == []
        wire = json.dumps(payload)
        for raw in ("<!everyone>", "<!channel>", "<@U123>", "<https://evil"):
            assert raw not in wire
        assert "&lt;!everyone&gt;" in payload["text"] and "&amp; co" in payload["text"]


def test_escape_keeps_quotes_and_drops_control_characters() -> None:
    assert escape_mrkdwn("it's <b> & \x00\x1b[31m\u202e") == "it's &lt;b&gt; &amp; [31m"


def test_truncation_never_leaves_half_an_entity() -> None:
    escaped = escape_mrkdwn("a" * 8 + "&&&&")
    for limit in range(5, len(escaped) + 1):
        cut = truncate_escaped(escaped, limit)
        assert len(cut) <= limit
        assert not cut.rstrip("…").endswith(("&", "&a", "&am", "&amp"))


def test_incoming_text_reads_as_typed() -> None:
    raw = "13B &lt;lora&gt; &amp; <@U42> <https://hf.co/x|the model> <#C1|ml>"
    assert incoming_to_plain(raw) == "13B <lora> & @U42 the model ml"


def test_oversize_reply_is_split_and_every_payload_respects_the_limits() -> None:
    many_rows = [
        card_row(
            f"GPU model number {n} with a long marketing name",
            count=n % 8 + 1,
            verdict="tight",
            headroom_gib=0.5,
            hours=1234.5,
            cost_usd=98765.4,
            cost_usd_median=None,
            usd_per_hour=None,
            highlight=None,
        )
        for n in range(400)
    ]
    reply = _plan_reply(
        title="T" * 4000,
        body="&<>" * 5000,
        table=many_rows,
        memory=[MemoryLine(component=f"part {n} " * 300, gib=n) for n in range(35)],
        assumptions=[f"assumption {n} " + "x" * 2500 for n in range(40)],
        suggestions=["s" * 4000] * 60,
        whatifs=[WhatIf(id=f"w{n}", label="L" * 100, text="v" * 3000) for n in range(30)],
    )
    payloads = render_reply(reply, conversation_id="c" * 400)
    assert len(payloads) > 1
    for payload in payloads:
        assert payload_problems(payload) == [], payload_problems(payload)
    blocks = _all_blocks(payloads)
    assert len(blocks[0]["text"]["text"]) <= limits.HEADER_TEXT_MAX_CHARS
    table_text = "".join(b["text"]["text"] for b in blocks if b.get("text", {}).get("type"))
    assert "399× " not in table_text  # counts wrap at 8 — sanity of the fixture
    assert sum(text.count("GPU model number") for text in [table_text]) == 400
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert len(buttons) == limits.ACTIONS_ELEMENTS_MAX
    assert payloads[1]["text"].endswith(f"(continued 2/{len(payloads)})")


def test_help_reply_renders_its_body() -> None:
    reply = Reply(kind="help", title="gpuplan help", body="Ask: 13B QLoRA, 4k ctx\nor: help")
    (payload,) = render_reply(reply)
    assert payload_problems(payload) == []
    assert payload["blocks"][1]["text"]["text"] == "Ask: 13B QLoRA, 4k ctx\nor: help"


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(max_size=4000),
    lines=st.lists(st.text(max_size=300), max_size=30),
    gib=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9),
)
def test_any_reply_renders_within_limits(text: str, lines: list[str], gib: float) -> None:
    reply = Reply(
        kind="plan",
        title=text,
        verdict=text,
        body=text,
        required_gib=gib,
        memory=[MemoryLine(component=line, gib=gib) for line in lines],
        assumptions=lines,
        warnings=lines,
        whatifs=[WhatIf(id=line or "x", label=line, text=line or "?") for line in lines],
    )
    for payload in render_reply(reply, conversation_id=text[:50]):
        assert payload_problems(payload) == []


def test_a_comparison_is_shown_side_by_side() -> None:
    lines = ["7B: 7.5 GiB per GPU; fits", "13B: 11.6 GiB per GPU; fits"]
    (payload,) = render_reply(_plan_reply(comparison=lines))
    texts = [block.get("text", {}).get("text", "") for block in payload["blocks"]]
    assert "*Side by side*\n• 7B: 7.5 GiB per GPU; fits\n• 13B: 11.6 GiB per GPU; fits" in texts
