"""ThreadKey: which conversation a message belongs to, opaque to the core."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ThreadKey(BaseModel):
    """Platform, workspace/guild, channel and thread root. The core only ever uses `str(key)`."""

    model_config = ConfigDict(frozen=True)

    platform: str
    workspace: str = ""
    channel: str = ""
    thread: str = ""

    def __str__(self) -> str:
        return "/".join((self.platform, self.workspace, self.channel, self.thread))
