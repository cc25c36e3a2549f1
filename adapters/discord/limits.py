"""Discord's hard limits: the single source of every Discord number the adapter relies on.
Breaking a message limit gets a 400 (code 50035).

Source: discord/discord-api-docs (resources/message.mdx embed limits table,
components/reference.mdx, interactions/application-commands.mdx,
interactions/receiving-and-responding.mdx), as summarised in ../shared/docs/chat-platforms.md §1.1.
"""

from __future__ import annotations

# Embeds (per embed, and summed over every embed of one message).
EMBED_TITLE = 256
EMBED_DESCRIPTION = 4096
EMBED_FIELDS = 25
EMBED_FIELD_NAME = 256
EMBED_FIELD_VALUE = 1024
EMBED_FOOTER = 2048
EMBED_TOTAL_PER_MESSAGE = 6000
EMBEDS_PER_MESSAGE = 10

# Messages and components.
ACTION_ROWS_PER_MESSAGE = 5
BUTTONS_PER_ROW = 5
BUTTON_LABEL = 80
CUSTOM_ID = 100

# Application commands.
CHOICES_MAX = 25  # also the cap on autocomplete results
CHOICE_VALUE_MAX = 100

# Interactions.
INTERACTION_TOKEN_TTL_S = 15 * 60
THREAD_NAME = 100
