"""A config.json shared with a message: Slack sends the file's metadata with the event, and its
content is fetched from the file's private URL with the bot token (the files:read scope).

Only a URL on Slack's file host (or, for a test's local fake, the Web API's own host) is fetched:
the event is signed, but the bot never follows a link anywhere else.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bot.configs import MAX_CONFIG_ATTACHMENT_BYTES

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

SLACK_FILE_HOST = "files.slack.com"
FETCH_TIMEOUT_S = 10.0


def config_file(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first shared .json file small enough to be a config, or None."""
    for shared in files:
        name = str(shared.get("name") or "")
        if not name.lower().endswith(".json"):
            continue
        size = shared.get("size")
        if isinstance(size, int) and size > MAX_CONFIG_ATTACHMENT_BYTES:
            return None
        return shared
    return None


def fetchable(url: str, api_url: str) -> bool:
    """Whether `url` is on Slack's file host or the Web API's host (over https, or http on the
    loopback a test serves)."""
    parts, api = urlsplit(url), urlsplit(api_url)
    if parts.hostname == SLACK_FILE_HOST:
        return parts.scheme == "https"
    return parts.netloc == api.netloc and parts.scheme == api.scheme


async def shared_config(files: list[dict[str, Any]], token: str | None, api_url: str) -> str:
    """The text of a config.json shared with the message; empty when there is none, when it is
    too big or elsewhere, or when Slack does not hand it over (a missing files:read is logged)."""
    shared = config_file(files)
    if shared is None:
        return ""
    name = str(shared.get("name"))
    url = str(shared.get("url_private_download") or shared.get("url_private") or "")
    if not url or not token or not fetchable(url, api_url):
        return ""
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_S)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url, headers=headers, allow_redirects=False) as response,
        ):
            # Without files:read Slack answers with its sign-in page (or a redirect to it).
            if response.status != 200 or "html" in response.content_type:
                logger.warning(
                    "could not fetch shared file %s (HTTP %s): is files:read granted?",
                    name, response.status,
                )  # fmt: skip
                return ""
            body = await _read_up_to(response.content, MAX_CONFIG_ATTACHMENT_BYTES + 1)
    except (aiohttp.ClientError, TimeoutError):
        logger.warning("could not fetch shared file %s", name)
        return ""
    if len(body) > MAX_CONFIG_ATTACHMENT_BYTES:
        return ""
    return body.decode("utf-8", errors="replace")


async def _read_up_to(stream: aiohttp.StreamReader, limit: int) -> bytes:
    """The body, to its end or to `limit` bytes, whichever comes first. (`read(n)` returns what
    the first network read brought, so a file bigger than that came back cut short.)"""
    body = bytearray()
    async for chunk in stream.iter_chunked(64 * 1024):
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])
