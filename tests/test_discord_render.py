"""The Discord renderer: every payload fits Discord's limits and schemas, however big the answer."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.discord import limits
from adapters.discord.render import (
    CHART_FILENAME,
    MAX_MESSAGES,
    WHATIF_TEMPLATE,
    embed_size,
    render_reply,
    whatif_custom_id,
)
from bot.reply import MemoryLine, Reply, WhatIf
from tests.fakes.discord_api import schema_errors
from tests.replies import card_row


def _plan(**overrides) -> Reply:
    values = dict(
        kind="plan",
        title="Llama-2-13B QLoRA, 4k context",
        verdict="Fits on one RTX 4090 with 4.1 GiB to spare.",
        required_gib=19.9,
        range_gib=(18.0, 22.5),
        memory=[
            MemoryLine(component="weights", gib=7.1),
            MemoryLine(component="activations", gib=9),
        ],
        table=[
            card_row(),
            card_row("H100 SXM", verdict="fits", highlight=None, hours=None, cost_usd=None),
        ],
        recommendation=["Rent 1× RTX 4090 (cheapest, $9.80)"],
        assumptions=["13B read as Llama-2-13B", "bf16 compute"],
        price_date="2026-11-01",
        whatifs=[WhatIf(id="ctx8k", label="8k context", text="what if 8k ctx?")],
        has_chart=True,
    )
    return Reply(**(values | overrides))


def _assert_valid(payloads: list[dict]) -> None:
    assert payloads
    for payload in payloads:
        assert payload["allowed_mentions"] == {"parse": []}
        assert schema_errors("IncomingWebhookInteractionRequest", payload) == []
        assert schema_errors("MessageCreateRequest", payload) == []
        assert len(payload["embeds"]) <= limits.EMBEDS_PER_MESSAGE
        assert sum(embed_size(e) for e in payload["embeds"]) <= limits.EMBED_TOTAL_PER_MESSAGE
        for embed in payload["embeds"]:
            assert schema_errors("RichEmbed", embed) == []
        for row in payload["components"]:
            for button in row["components"]:
                assert button["label"].strip()
                assert WHATIF_TEMPLATE.fullmatch(button["custom_id"])


def test_a_plan_renders_as_one_message_with_title_verdict_table_fields_footer_and_buttons():
    (payload,) = render_reply(_plan())
    _assert_valid([payload])
    (embed,) = payload["embeds"]
    assert embed["title"] == "Llama-2-13B QLoRA, 4k context"
    assert embed["description"].startswith("Fits on one RTX 4090 with 4.1 GiB to spare.")
    table = embed["description"].split("```\n", 1)[1]
    assert table.splitlines()[1].split()[:4] == ["RTX", "4090", "×1", "fits"]
    assert "–" in table.splitlines()[2]  # unknown hours and cost show as a dash
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Memory per GPU ≈ 19.9 GiB"] == "• weights: 7.1 GiB\n• activations: 9.0 GiB"
    assert fields["Recommendation"].startswith("• Rent 1× RTX 4090")
    assert embed["footer"]["text"] == (
        "Assumed: 13B read as Llama-2-13B; bf16 compute · Prices from 2026-11-01"
    )
    assert embed["image"] == {"url": f"attachment://{CHART_FILENAME}"}
    (row,) = payload["components"]
    assert row["components"] == [
        {
            "type": 2,
            "style": 2,
            "label": "8k context",
            "custom_id": "gpuplan:whatif:ctx8k:what if 8k ctx?",
        }
    ]


def test_help_and_error_replies_carry_their_body_text():
    (payload,) = render_reply(Reply(kind="help", title="gpuplan", body="Ask: 13B QLoRA on a 4090"))
    _assert_valid([payload])
    assert payload["embeds"][0]["description"] == "Ask: 13B QLoRA on a 4090"
    assert payload["components"] == []


def test_mass_mentions_and_markdown_from_the_question_are_defused():
    reply = _plan(title="@everyone 13B", verdict="**bold** @here `x`", whatifs=[])
    (payload,) = render_reply(reply)
    embed = payload["embeds"][0]
    assert "@everyone" not in embed["title"] and "@\u200beveryone" in embed["title"]
    assert embed["description"].startswith(r"\*\*bold\*\* @" + "\u200bhere " + r"\`x\`")
    assert payload["allowed_mentions"] == {"parse": []}


def test_the_card_table_stays_narrow_and_drops_columns_no_card_fills():
    rows = [
        card_row(
            "NVIDIA RTX PRO 6000 Blackwell Server Edition", count=2, hours=None, cost_usd=None
        ),
        card_row("AMD Instinct MI300X", verdict="tight", hours=None, cost_usd=None, highlight=None),
    ]
    (payload,) = render_reply(_plan(table=rows))
    header, first, second = payload["embeds"][0]["description"].split("```\n")[1].splitlines()[:3]
    assert header.split() == ["GPU", "fit", "±GiB", "$/h"]
    assert first.startswith("RTX PRO 6000 Blackwe… ×2 fits")
    assert second.startswith("AMD Instinct MI300X ×1   tight")
    assert max(len(line) for line in (header, second)) <= 60


def test_a_backtick_fence_in_a_card_name_cannot_break_out_of_the_table():
    (payload,) = render_reply(_plan(table=[card_row("evil```card")]))
    assert payload["embeds"][0]["description"].count("```") == 2


def test_what_if_custom_ids_are_stable_bounded_and_carry_the_follow_up():
    whatif = WhatIf(id="ctx8k", label="8k ctx", text="what if 8k ctx?")
    assert whatif_custom_id(whatif) == whatif_custom_id(whatif.model_copy())
    match = WHATIF_TEMPLATE.fullmatch(whatif_custom_id(whatif))
    assert match and (match["id"], match["text"]) == ("ctx8k", "what if 8k ctx?")

    long_text = WhatIf(id="Odd ID!", label="use 2 GPUs", text="what if " + "very " * 40 + "long")
    custom_id = whatif_custom_id(long_text)
    assert len(custom_id) <= limits.CUSTOM_ID
    assert custom_id == "gpuplan:whatif:oddid:use 2 GPUs"


def test_buttons_are_deduplicated_and_capped_at_five_rows_of_five():
    whatifs = [WhatIf(id=f"w{i}", label=f"option {i}", text=f"what if {i}") for i in range(40)]
    (payload,) = render_reply(_plan(whatifs=[*whatifs, whatifs[0]]))
    rows = payload["components"]
    assert len(rows) == limits.ACTION_ROWS_PER_MESSAGE
    ids = [b["custom_id"] for row in rows for b in row["components"]]
    assert len(ids) == len(set(ids)) == 25
    _assert_valid([payload])


def test_an_oversize_answer_is_split_into_valid_messages_and_nothing_is_dropped():
    rows = [card_row(f"GPU model {i:03d}") for i in range(150)]
    reply = _plan(
        title="t" * 500,
        verdict="v" * 5000,
        table=rows,
        warnings=[f"warning {i}: " + "w" * 1500 for i in range(8)],
        assumptions=["a" * 3000],
    )
    payloads = render_reply(reply)
    _assert_valid(payloads)
    assert len(payloads) > 1
    everything = "\n".join(
        (e.get("description") or "") + "".join(f["value"] for f in e.get("fields", []))
        for p in payloads
        for e in p["embeds"]
    )
    assert all(f"GPU model {i:03d}" in everything for i in range(150))
    assert all(f"warning {i}:" in everything for i in range(8))
    assert payloads[0]["embeds"][0]["title"].endswith("…")
    assert payloads[-1]["components"] and not payloads[0]["components"]


def test_a_flood_is_cut_to_a_few_messages_and_says_so():
    payloads = render_reply(_plan(warnings=["w" * 1000] * 200))
    _assert_valid(payloads)
    assert len(payloads) == MAX_MESSAGES
    assert payloads[-1]["content"].startswith("(Answer cut short:")
    assert payloads[-1]["components"]


_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=3000)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_text,
    verdict=_text,
    body=_text,
    lines=st.lists(_text, max_size=40),
    names=st.lists(st.text(min_size=1, max_size=60), max_size=60),
)
def test_any_reply_renders_within_every_limit(title, verdict, body, lines, names):
    reply = Reply(
        kind="plan",
        title=title,
        verdict=verdict,
        body=body,
        suggestions=lines,
        assumptions=lines,
        table=[card_row(name) for name in names],
        whatifs=[WhatIf(id=n, label=n, text=n) for n in names],
    )
    _assert_valid(render_reply(reply))


def test_a_comparison_is_a_side_by_side_field():
    lines = ["7B: 7.5 GiB per GPU; fits", "13B: 11.6 GiB per GPU; fits"]
    payloads = render_reply(_plan(comparison=lines))
    _assert_valid(payloads)
    fields = {f["name"]: f["value"] for e in payloads[0]["embeds"] for f in e.get("fields", [])}
    assert fields["Side by side"] == "• 7B: 7.5 GiB per GPU; fits\n• 13B: 11.6 GiB per GPU; fits"


def test_the_table_keeps_cents_so_close_runs_read_apart() -> None:
    rows = [card_row("A100", cost_usd=7.17), card_row("L40S", cost_usd=7.37, highlight=None)]
    table = render_reply(_plan(table=rows))[0]["embeds"][0]["description"]
    assert "7.17" in table and "7.37" in table
