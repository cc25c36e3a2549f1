"""The real Bolt AsyncApp on 127.0.0.1, fed HMAC-signed Slack requests, its Web API client pointed
at a loopback fake Slack that records (and limit-checks) everything the bot sends."""

from __future__ import annotations

import json
import threading
import time
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest

from adapters.slack import limits
from adapters.slack.app import ACK_TEXT, build_app, make_client
from adapters.slack.render import render_reply
from adapters.slack.serve import EVENTS_PATH, start_http
from bot.conversation import Conversation
from bot.patches import Button
from bot.reply import Reply, WhatIf
from bot.state.seen import SeenInProcess
from bot.threads import ThreadKey
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack, payload_problems, sign

SECRET = "test-signing-secret"
CHANNEL = "C0PLANS"
# A model whose context window holds the doubled contexts the buttons offer.
QUESTION = "llama 3.1 8b QLoRA, 4k ctx, 20M tokens x3"
# Slack gives up on an ack after 3 s; the test client does the same.
SLACK_ACK_TIMEOUT = aiohttp.ClientTimeout(total=limits.ACK_DEADLINE_S)


class Bot:
    """The app under test, served over HTTP, plus a Slack-like client that signs its requests."""

    def __init__(self, fake: FakeSlack, conversation: Any, **options: Any) -> None:
        self.fake = fake
        self.app = build_app(
            conversation,
            signing_secret=SECRET,
            client=make_client("xoxb-test", fake.base_url),
            **options,
        )
        self._events = 0

    async def __aenter__(self) -> Bot:
        self.runner = await start_http(self.app, "127.0.0.1", 0, signing_secret=SECRET)
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}{EVENTS_PATH}"
        self.http = aiohttp.ClientSession(timeout=SLACK_ACK_TIMEOUT)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.close()
        await self.runner.cleanup()

    async def post(
        self, body: str, content_type: str, headers: dict[str, str] | None = None, **sign_kw: Any
    ) -> tuple[int, str]:
        signed = {**sign(body, sign_kw.pop("secret", SECRET), **sign_kw), **(headers or {})}
        async with self.http.post(
            self.url, data=body, headers={**signed, "Content-Type": content_type}
        ) as response:
            return response.status, await response.text()

    async def slash(self, text: str, trigger: str = "1.2.3", **sign_kw: Any) -> tuple[int, str]:
        body = urlencode(
            {
                "command": "/gpuplan",
                "text": text,
                "team_id": TEAM_ID,
                "channel_id": CHANNEL,
                "user_id": "U0ANA",
                "trigger_id": trigger,
                "api_app_id": "A0001",
                "response_url": self.fake.response_url(f"commands/{trigger}"),
            }
        )
        return await self.post(body, "application/x-www-form-urlencoded", **sign_kw)

    async def event(
        self, event: dict[str, Any], event_id: str | None = None, retry: int | None = None
    ) -> tuple[int, str]:
        self._events += 1
        body = json.dumps(
            {
                "token": "legacy",
                "team_id": TEAM_ID,
                "api_app_id": "A0001",
                "type": "event_callback",
                "event_id": event_id or f"Ev{self._events:04d}",
                "event_time": int(time.time()),
                "event": {"channel": CHANNEL, "team": TEAM_ID, "user": "U0ANA", **event},
                "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
            }
        )
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.post(body, "application/json", headers if retry else None)

    async def mention(self, text: str, ts: str, thread_ts: str | None = None) -> tuple[int, str]:
        event = {"type": "app_mention", "text": f"<@{BOT_USER_ID}> {text}", "ts": ts}
        return await self.event({**event, **({"thread_ts": thread_ts} if thread_ts else {})})

    async def click(
        self, action: dict[str, Any], container: dict[str, Any], trigger: str = "9.9.9"
    ) -> tuple[int, str]:
        payload = {
            "type": "block_actions",
            "team": {"id": TEAM_ID},
            "user": {"id": "U0BEN"},
            "api_app_id": "A0001",
            "channel": {"id": CHANNEL},
            "container": {"type": "message", "channel_id": CHANNEL, **container},
            "trigger_id": trigger,
            "response_url": self.fake.response_url("actions/1"),
            "actions": [{"type": "button", **action}],
        }
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post(body, "application/x-www-form-urlencoded")


class Recording:
    """The real conversation, noting every question it is asked."""

    def __init__(self) -> None:
        self.real = Conversation(limit_rate=False)
        self.texts: list[str] = []

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        self.texts.append(text)
        return self.real.handle(key, text, user)


@pytest.fixture
def conversation() -> Recording:
    return Recording()


def _button(payload: dict[str, Any], label: str) -> dict[str, Any]:
    for block in payload["blocks"]:
        for element in block.get("elements", []):
            if element.get("type") == "button" and element["text"]["text"] == label:
                return {**element, "block_id": block["block_id"]}
    raise AssertionError(f"no {label!r} button")


async def _answer_with_a_button(
    bot: Bot, root: str
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Mention the bot at `root`; its posts, the first what-if button and where it was shown."""
    await bot.mention(QUESTION, ts=root)
    await bot.fake.wait_for(lambda: bot.fake.posts())
    answered = bot.fake.posts()
    button = _button(answered[-1], answered[-1]["blocks"][-1]["elements"][0]["text"]["text"])
    container = {"message_ts": f"{root}1", "thread_ts": root, "is_ephemeral": False}
    return answered, button, container


def _wire(payloads: list[dict[str, Any]]) -> str:
    return json.dumps(payloads, ensure_ascii=False)


class GatedConversation:
    """Holds every answer until the test opens the gate: a planner as slow as the test wants."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.keys: list[ThreadKey] = []

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        self.keys.append(key)
        self.started.set()
        self.gate.wait(timeout=10)
        return Reply(kind="plan", title=f"Plan for {text}", verdict="Fits")


async def test_slash_ack_arrives_while_the_planner_is_still_running(slack: FakeSlack) -> None:
    slow = GatedConversation()
    async with Bot(slack, slow) as bot:
        status, body = await bot.slash(QUESTION)  # raises if the ack took Slack's 3 s
        assert status == 200
        assert json.loads(body) == {"response_type": "ephemeral", "text": ACK_TEXT}
        assert not slow.gate.is_set() and slack.responses == []
        slow.gate.set()
        await slack.wait_for(lambda: slack.responses)
    ((url, answer),) = slack.responses
    assert url == "commands/1.2.3"
    assert answer["response_type"] == "in_channel" and answer["text"].startswith(
        "Plan for llama 3.1 8b"
    )
    assert slow.keys == [ThreadKey(platform="slack", workspace=TEAM_ID, channel=CHANNEL,
                                   thread="slash-1.2.3")]  # fmt: skip


async def test_slash_answer_has_header_table_and_whatif_buttons(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        assert (await bot.slash(QUESTION))[0] == 200
        await slack.wait_for(lambda: slack.responses)
    answers = [body for _, body in slack.responses]
    assert all(a["response_type"] == "in_channel" and not payload_problems(a) for a in answers)
    blocks = [b for a in answers for b in a["blocks"]]
    assert blocks[0]["type"] == "header"
    assert any(b.get("text", {}).get("text", "").startswith("```\ncard") for b in blocks)
    labels = [e["text"]["text"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert labels, "the answer offers what-if buttons"


async def test_private_slash_answer_and_help_are_ephemeral(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        await bot.slash(f"{QUESTION} private", trigger="7.7.7")
        await bot.slash("help", trigger="8.8.8")
        await slack.wait_for(lambda: {url for url, _ in slack.responses} >= {
            "commands/7.7.7", "commands/8.8.8"})  # fmt: skip
    by_url = {url: body for url, body in slack.responses}
    assert by_url["commands/7.7.7"]["response_type"] == "ephemeral"
    assert by_url["commands/8.8.8"]["response_type"] == "ephemeral"
    help_reply = conversation.real.handle(ThreadKey(platform="test"), "help")
    assert help_reply.kind == "help"
    assert by_url["commands/8.8.8"]["blocks"] == render_reply(help_reply)[0]["blocks"]


async def test_mention_is_answered_in_a_thread_and_a_whatif_replans_there(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        await bot.mention(QUESTION, ts="1700000001.000100")
        await slack.wait_for(lambda: slack.posts())
        first = slack.posts()
        assert {p["thread_ts"] for p in first} == {"1700000001.000100"}
        assert {p["channel"] for p in first} == {CHANNEL}
        await bot.mention("what if 8k ctx?", ts="1700000002.000100", thread_ts="1700000001.000100")
        await slack.wait_for(lambda: len(slack.posts()) > len(first))
    whatif = slack.posts()[len(first) :]
    assert {p["thread_ts"] for p in whatif} == {"1700000001.000100"}
    wire = _wire(whatif)
    assert "What changed" in wire and "4096" in wire and "8192" in wire


async def test_plain_thread_reply_replans_but_other_messages_are_ignored(
    slack: FakeSlack, conversation: Recording
) -> None:
    root = "1700000010.000100"
    async with Bot(slack, conversation) as bot:
        await bot.mention(QUESTION, ts=root)
        await slack.wait_for(lambda: slack.posts())
        answered = len(slack.posts())
        ignored = [
            {"type": "message", "text": "what if 8k ctx?", "ts": "1.1", "thread_ts": "999.1"},
            {"type": "message", "text": "what if 8k ctx?", "ts": "1.2"},  # not in a thread
            {"type": "message", "text": "what if 2 GPUs?", "ts": "1.3", "thread_ts": root,
             "bot_id": "B0OTHER"},
            {"type": "message", "subtype": "message_changed", "ts": "1.4", "thread_ts": root,
             "message": {"text": "what if 2 GPUs?"}},
            {"type": "message", "text": f"<@{BOT_USER_ID}> what if 2 GPUs?", "ts": "1.5",
             "thread_ts": root},  # app_mention answers this one
        ]  # fmt: skip
        for event in ignored:
            assert (await bot.event(event))[0] == 200
        await bot.event({"type": "message", "text": "what if 8k ctx?", "ts": "1.6",
                         "thread_ts": root})  # fmt: skip
        await slack.wait_for(lambda: len(slack.posts()) > answered)
    replies = slack.posts()[answered:]
    assert {p["thread_ts"] for p in replies} == {root}
    assert "8192" in _wire(replies)
    assert conversation.texts == [QUESTION, "what if 8k ctx?"]


async def test_button_click_replans_in_the_same_thread(
    slack: FakeSlack, conversation: Recording
) -> None:
    root = "1700000020.000100"
    async with Bot(slack, conversation) as bot:
        answered, button, container = await _answer_with_a_button(bot, root)
        status, _ = await bot.click(button, container)
        assert status == 200
        await slack.wait_for(lambda: len(slack.posts()) > len(answered))
    clicked = slack.posts()[len(answered) :]
    assert {p["thread_ts"] for p in clicked} == {root}
    assert "What changed" in _wire(clicked)


async def test_a_button_click_applies_its_stored_change_end_to_end(
    slack: FakeSlack, conversation: Recording
) -> None:
    root = "1700000021.000100"
    async with Bot(slack, conversation) as bot:
        answered, _, container = await _answer_with_a_button(bot, root)
        button = _button(answered[-1], "8k context")
        assert button["action_id"].startswith("whatif:p-")  # an id, not prose to re-read
        await bot.click(button, container)
        await slack.wait_for(lambda: len(slack.posts()) > len(answered))
    assert "context length: 4096 → 8192" in _wire(slack.posts()[len(answered) :])


async def test_an_old_format_button_still_works_and_an_expired_one_says_so(
    slack: FakeSlack, conversation: Recording
) -> None:
    root = "1700000022.000100"
    async with Bot(slack, conversation) as bot:
        answered, button, container = await _answer_with_a_button(bot, root)
        old = {**button, "action_id": "whatif:ctx8k", "value": "what if 8k ctx?"}
        await bot.click(old, container, trigger="8.1.1")
        await slack.wait_for(lambda: len(slack.posts()) > len(answered))
        seen = len(slack.posts())
        assert "context length: 4096 → 8192" in _wire(slack.posts()[len(answered) :])
        gone = {**button, "action_id": "whatif:p-aaaaaaaaaaaa", "value": "what if 8k ctx?"}
        await bot.click(gone, container, trigger="8.1.2")
        await slack.wait_for(lambda: len(slack.posts()) > seen)
    assert "This button has expired, ask again" in _wire(slack.posts()[seen:])


async def test_button_on_a_slash_answer_opens_a_thread_that_keeps_the_slash_job(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        await bot.slash(QUESTION, trigger="5.5.5")
        await slack.wait_for(lambda: slack.responses)
        answer = slack.responses[-1][1]
        button = _button(answer, "8k context")
        message_ts = "1700000030.000100"  # the slash answer, as Slack numbered it
        await bot.click(button, {"message_ts": message_ts, "is_ephemeral": False})
        await slack.wait_for(lambda: slack.posts())
        assert {p["thread_ts"] for p in slack.posts()} == {message_ts}
        assert "context length: 4096 → 8192" in _wire(slack.posts())
        clicked = len(slack.posts())
        await bot.mention("what if 16k ctx?", ts="1700000031.000100", thread_ts=message_ts)
        await slack.wait_for(lambda: len(slack.posts()) > clicked)
    # The thread carries on from the slash command's job as the button changed it: 8k → 16k.
    assert "context length: 8192 → 16384" in _wire(slack.posts()[clicked:])


@pytest.mark.parametrize(
    "sign_kw",
    [{"secret": "not-the-secret"}, {"timestamp": int(time.time()) - 600}],
    ids=["bad-signature", "ten-minutes-old"],
)
async def test_unsigned_or_stale_requests_get_401_and_no_answer(
    slack: FakeSlack, sign_kw: dict[str, Any]
) -> None:
    slow = GatedConversation()
    slow.gate.set()
    async with Bot(slack, slow) as bot:
        status, _ = await bot.slash(QUESTION, **sign_kw)
        assert status == 401
        status, _ = await bot.post(
            json.dumps({"type": "event_callback", "event_id": "Ev1", "team_id": TEAM_ID,
                        "event": {"type": "app_mention", "text": "hi", "ts": "1.0",
                                  "channel": CHANNEL}}),
            "application/json",
            **sign_kw,
        )  # fmt: skip
        assert status == 401
        # A correctly signed request afterwards proves the app was listening all along.
        await bot.slash(QUESTION, trigger="after")
        await slack.wait_for(lambda: slack.responses)
    assert [url for url, _ in slack.responses] == ["commands/after"]
    assert slow.keys == [ThreadKey(platform="slack", workspace=TEAM_ID, channel=CHANNEL,
                                   thread="slash-after")]  # fmt: skip
    assert slack.posts() == []


async def test_retried_event_is_answered_once(slack: FakeSlack) -> None:
    slow = GatedConversation()
    slow.gate.set()
    async with Bot(slack, slow) as bot:
        event = {"type": "app_mention", "text": f"<@{BOT_USER_ID}> {QUESTION}", "ts": "5.5"}
        for retry in (None, 1, 2):
            assert (await bot.event(event, event_id="EvSAME", retry=retry))[0] == 200
        await bot.event({**event, "ts": "6.6"}, event_id="EvOTHER")
        await slack.wait_for(lambda: len(slack.posts()) >= 2)
    assert [p["thread_ts"] for p in slack.posts()] == ["5.5", "6.6"]
    assert len(slow.keys) == 2


async def test_everyone_in_the_question_is_defused(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        await bot.mention("<!everyone> <@U0EVE> 13B QLoRA &amp; 4k ctx", ts="7.7")
        await bot.slash("<!channel> 13B QLoRA, 4k ctx", trigger="6.6.6")
        await slack.wait_for(lambda: slack.posts() and slack.responses)
    wire = _wire(slack.posts() + [body for _, body in slack.responses])
    assert conversation.texts[0] == "@everyone @U0EVE 13B QLoRA & 4k ctx"
    for raw in ("<!everyone>", "<!channel>", "<@U0EVE>"):
        assert raw not in wire


class OversizeConversation:
    """A reply far beyond one Slack message, as a pathological plan could produce."""

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        return Reply(
            kind="plan",
            title="Huge " * 100,
            verdict="Does not fit " * 400,
            warnings=[f"warning {n} " + "w" * 2900 for n in range(60)],
            assumptions=[f"assumption {n}" for n in range(80)],
            whatifs=[WhatIf(id=f"w{n}", label=f"what if {n}", text=f"w{n}") for n in range(40)],
        )


async def test_oversize_answers_are_split_and_slack_accepts_every_part(slack: FakeSlack) -> None:
    async with Bot(slack, OversizeConversation()) as bot:
        await bot.mention(QUESTION, ts="8.8")
        await bot.slash(QUESTION, trigger="4.4.4")
        await slack.wait_for(lambda: len(slack.posts()) > 5 and slack.responses)
        await slack.wait_for(
            lambda: any(p["blocks"][-1]["type"] == "actions" for p in slack.posts())
        )
    posts = slack.posts()
    assert all(not payload_problems(p) for p in posts)
    assert len(slack.responses) <= limits.RESPONSE_URL_MAX_POSTS
    assert all(not payload_problems(body) for _, body in slack.responses)


async def test_rate_limited_post_is_retried_after_retry_after(slack: FakeSlack) -> None:
    slow = GatedConversation()
    slow.gate.set()
    slack.rate_limit_next["chat.postMessage"] = 1
    async with Bot(slack, slow) as bot:
        await bot.mention(QUESTION, ts="9.9")
        await slack.wait_for(lambda: slack.posts())
    assert [m for m, _ in slack.calls if m.startswith("chat.postMessage")] == [
        "chat.postMessage#429",
        "chat.postMessage",
    ]


async def test_chart_is_uploaded_into_the_thread_when_files_are_enabled(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation, files_enabled=True) as bot:
        await bot.mention(QUESTION, ts="1700000040.000100")
        await slack.wait_for(lambda: slack.posts("files.completeUploadExternal"))
    assert slack.uploads[0].startswith(b"\x89PNG")
    (complete,) = slack.posts("files.completeUploadExternal")
    assert complete["thread_ts"] == "1700000040.000100" and complete["channel_id"] == CHANNEL


async def test_url_verification_is_echoed(slack: FakeSlack) -> None:
    async with Bot(slack, GatedConversation()) as bot:
        body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "t"})
        status, text = await bot.post(body, "application/json")
    assert status == 200 and json.loads(text)["challenge"] == "abc123"


async def test_button_under_a_private_answer_answers_privately(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        await bot.slash(f"{QUESTION} private", trigger="2.2.2")
        await slack.wait_for(lambda: slack.responses)
        button = _button(slack.responses[-1][1], "8k context")
        await bot.click(button, {"message_ts": "1700000050.000100", "is_ephemeral": True})
        await slack.wait_for(lambda: any(url == "actions/1" for url, _ in slack.responses))
    (answer,) = [body for url, body in slack.responses if url == "actions/1"]
    assert answer["response_type"] == "ephemeral" and "context length: 4096 → 8192" in _wire(
        [answer]
    )
    assert slack.posts() == []  # nothing in the channel


async def test_delivery_ids_are_forgotten_after_the_ttl() -> None:
    now = [0.0]
    seen = SeenInProcess(ttl_s=60, clock=lambda: now[0])
    assert await seen.first_time("event:Ev1") and not await seen.first_time("event:Ev1")
    now[0] = 59.0
    assert not await seen.first_time("event:Ev1") and await seen.first_time("trigger:Ev1")
    now[0] = 61.0
    assert await seen.first_time("event:Ev1") and not await seen.first_time("trigger:Ev1")


async def test_a_replayed_slash_command_is_answered_once(slack: FakeSlack) -> None:
    slow = GatedConversation()
    slow.gate.set()
    async with Bot(slack, slow) as bot:
        first = await bot.slash(QUESTION, trigger="3.3.3")
        replay = await bot.slash(QUESTION, trigger="3.3.3")  # same body, freshly signed
        await bot.slash(QUESTION, trigger="3.3.4")
        await slack.wait_for(lambda: len(slack.responses) >= 2)
    assert first[0] == 200 and json.loads(first[1])["text"] == ACK_TEXT
    # The repeat is acked like any command (the ack waits on no store) and dropped after it.
    assert replay == first
    assert sorted(url for url, _ in slack.responses) == ["commands/3.3.3", "commands/3.3.4"]
    assert len(slow.keys) == 2


async def test_a_replayed_button_click_is_answered_once(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        answered, button, container = await _answer_with_a_button(bot, "1700000060.000100")
        for _ in range(3):
            assert (await bot.click(button, container, trigger="7.1.1"))[0] == 200
        await slack.wait_for(lambda: len(slack.posts()) > len(answered))
        await bot.click(button, container, trigger="7.1.2")
        await slack.wait_for(lambda: len(conversation.texts) == 3)
    pressed = Button(button["action_id"].removeprefix("whatif:"), button["value"])
    assert pressed.stored and conversation.texts == [QUESTION, pressed, pressed]


async def test_an_inverse_question_is_answered_with_the_number_first(
    slack: FakeSlack, conversation: Recording
) -> None:
    async with Bot(slack, conversation) as bot:
        await bot.mention("max context for llama 3.1 8b qlora on a 4090", ts="1700000009.000100")
        await slack.wait_for(lambda: slack.posts())
        first = slack.posts()
        await bot.mention("and the max batch?", ts="1700000010.000100",
                          thread_ts="1700000009.000100")  # fmt: skip
        await slack.wait_for(lambda: len(slack.posts()) > len(first))
    assert "Up to " in _wire(first) and " tokens fit one NVIDIA GeForce RTX 4090" in _wire(first)
    assert "Up to micro-batch" in _wire(slack.posts()[len(first) :])


async def test_a_config_json_shared_with_a_mention_plans_that_model(slack: FakeSlack) -> None:
    """Slack sends the file's metadata; the bot fetches it from url_private with its token
    (files:read) and plans the supplied model. Without the scope Slack hands back its sign-in
    page, and the bot answers the words alone; a URL off Slack's hosts is never fetched."""
    from tests.test_config_questions import TINY

    conversation = Conversation(limit_rate=False)
    config = slack.share_file("config.json", json.dumps(TINY).encode())
    async with Bot(slack, conversation) as bot:
        await bot.event({"type": "app_mention", "text": f"<@{BOT_USER_ID}> qlora 4k ctx",
                         "ts": "1700000200.000100", "files": [config]})  # fmt: skip
        await slack.wait_for(lambda: slack.posts())
        assert "tiny-llama-3b" in _wire(slack.posts())
        assert slack.file_fetches[0]["auth"] == "Bearer xoxb-test"

        slack.granted_scopes.remove("files:read")
        await bot.event({"type": "app_mention", "text": f"<@{BOT_USER_ID}> qlora 4k ctx",
                         "ts": "1700000300.000100", "files": [config]})  # fmt: skip
        await slack.wait_for(lambda: len(slack.posts()) > 1)
        assert "tiny-llama-3b" not in _wire(slack.posts()[1:])

        elsewhere = {**config, "url_private_download": "http://198.51.100.7/config.json",
                     "url_private": "http://198.51.100.7/config.json"}  # fmt: skip
        answered = len(slack.posts())
        await bot.event({"type": "app_mention", "text": f"<@{BOT_USER_ID}> qlora 4k ctx",
                         "ts": "1700000400.000100", "files": [elsewhere]})  # fmt: skip
        await slack.wait_for(lambda: len(slack.posts()) > answered)
    assert len(slack.file_fetches) == 2
