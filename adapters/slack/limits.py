"""Slack's numbers, in one place. Every renderer check and every test reads them from here.

Sources: docs.slack.dev Block Kit reference (blocks, header, section, context, actions, button),
api.slack.com slash-command docs (3 s ack; response_url 5 posts in 30 min) and slackapi/bolt-js#2509
(undocumented `msg_blocks_too_long` at about 13.2k characters), as summarised in
shared/docs/chat-platforms.md §1.2.
"""

from __future__ import annotations

MAX_BLOCKS_PER_MESSAGE = 50
SECTION_TEXT_MAX_CHARS = 3000
SECTION_FIELDS_MAX = 10
SECTION_FIELD_MAX_CHARS = 2000
HEADER_TEXT_MAX_CHARS = 150
CONTEXT_ELEMENTS_MAX = 10
# Context text objects share the generic text-object cap; we stay at the field size to be safe.
CONTEXT_TEXT_MAX_CHARS = 2000
ACTIONS_ELEMENTS_MAX = 25
BUTTON_TEXT_MAX_CHARS = 75
BUTTON_VALUE_MAX_CHARS = 2000
ACTION_ID_MAX_CHARS = 255
BLOCK_ID_MAX_CHARS = 255
# Top-level `text` is the notification/accessibility fallback; Slack truncates at 40k, we keep it
# short because it is shown in notifications.
FALLBACK_TEXT_MAX_CHARS = 3000
# Guard below the undocumented ~13.2k `msg_blocks_too_long`: measured as the JSON size of `blocks`.
MESSAGE_BLOCKS_MAX_JSON_CHARS = 12_000

ACK_DEADLINE_S = 3.0
# Slack's request signing: a request signed more than 5 minutes ago is refused (replay window).
SIGNATURE_MAX_AGE_S = 5 * 60
# What the HTTP endpoint reads at most (aiohttp's default cap, kept): Slack's bodies are a few KB.
REQUEST_MAX_BYTES = 1024 * 1024
RESPONSE_URL_MAX_POSTS = 5
# Slack retries undelivered events after ~1 min and ~5 min, and a signed request stays valid for
# 5 min; remember event and trigger ids well past both.
DELIVERY_REPEAT_TTL_S = 60 * 60
