"""A reply's attached files (a run config, bot/run_configs.py) uploaded into its thread with
files.uploadV2 (files.getUploadURLExternal, one upload per file, files.completeUploadExternal;
the files:write scope). A failed upload is logged and said in the thread: the answer stands."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError

from adapters.slack.escape import clean
from bot import phrases
from bot.reply import Reply

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

UPLOAD_FAILED = "Could not attach the files ({error}): is the files:write scope granted?"


def without_files(reply: Reply) -> Reply:
    """A reply for a response_url (a private answer), which carries no files: it says where to
    ask instead of promising attachments."""
    if not reply.files:
        return reply
    return reply.model_copy(update={"files": [], "body": phrases.FILES_NEED_A_THREAD})


async def upload_files(client: AsyncWebClient, channel: str, thread_ts: str, reply: Reply) -> bool:
    """Upload `reply.files` into the thread as one share; False (logged, said) when Slack
    refuses."""
    if not reply.files:
        return True
    uploads = [
        {"content": file.text, "filename": file.name, "title": file.name} for file in reply.files
    ]
    try:
        await client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, file_uploads=uploads, title=clean(reply.title)
        )
    except SlackApiError as error:
        reason = error.response.get("error", "error") if error.response else "error"
        logger.warning("uploading %d files to %s failed: %s", len(uploads), channel, reason)
        await client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=UPLOAD_FAILED.format(error=reason)
        )
        return False
    return True
