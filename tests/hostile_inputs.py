"""Hostile and odd inputs people paste into chat; shared by the hostile suite and its benchmark."""

from __future__ import annotations

HOSTILE_INPUTS: dict[str, str] = {
    "exponent_tower": "9**9**9 tokens 13B qlora",
    "exponent_caret": "13B lora 10^10^10 tokens",
    "overflow_float": "1e999 tokens on 7B lora, seq 1e999",
    "nan": "NaN epochs of 7B lora, context nan",
    "infinity": "7B lora, inf tokens, -inf epochs, ∞ ctx",
    "negative": "7B lora, -5 epochs, seq_len -1, batch -3, -2x4090",
    "zero": "7B lora, 0 epochs, micro_batch 0, 0x4090, 0 tokens",
    "absurd": "999999999999999999B full fine-tune, 10^30 ctx on 99999999 GPUs",
    "paste_100kb": "13B QLoRA, 4k ctx " + "lorem ipsum dolor sit amet " * 4000,
    "control_chars": "13B\x00 QLoRA\x07, 4k\x1b[31m ctx\x08\x7f, 20M tokens x3",
    "rtl_override": "13B \u202eAROLQ\u202c, 4k ctx \u2066x3\u2069",
    "emoji": "🦙 13B 🔥 QLoRA 🚀 4k ctx 💸 20M tokens x3 🤔",
    "zero_width": "1\u200b3B QLo\u200dRA 4\u200ck ctx",
    "template_injection": "{{7*7}} ${7*7} {0.__class__} %s%n 13B lora #{7*7}",
    "sql_injection": "13B lora'; DROP TABLE threads; -- \" OR 1=1 --",
    "python_code": "__import__('os').system('echo pwned') 7B lora",
    "slack_mentions": (
        "<!everyone> <!channel> <!here> <@U123456> <https://evil.example|click> 13B lora"
    ),
    "discord_mentions": "@everyone @here <@123456789012345678> <@&987654321098765432> 13B lora",
    "markdown_bomb": "```" * 300 + "*" * 2000,
    "only_whitespace": " \t\n\r  ",
    "empty": "",
    "unicode_digits": "١٣B QLoRA ٤k ctx",
    "huge_number_words": "a gazillion billion trillion tokens of llama",
    "nested_parens": "(" * 1500 + "13B" + ")" * 400,
    "many_numbers": " ".join(str(i) for i in range(600)),
    "repeated_units": "4k" * 900,
    "html": "<script>alert(1)</script><img src=x onerror=alert(1)> 7B lora",
}
