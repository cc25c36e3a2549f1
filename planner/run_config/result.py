"""What generating a run config returns: the files, in the order to read them, and what the stack
could not say."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class StackFiles:
    """One stack's part of a run config: its files, how to install and launch it, and the plan's
    fields it cannot express (each a sentence) and the values it leaves to the user (TODOs)."""

    files: dict[str, str]
    install: str  # the shell lines that install the stack (SkyPilot's setup)
    launch: str  # the shell lines that start the training (SkyPilot's run)
    unexpressed: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RunConfig:
    """The files that realise a plan in one stack, with sky.yaml and README.txt; `files` keeps
    the order a reader should open them in."""

    stack: str
    files: dict[str, str]
    unexpressed: tuple[str, ...]
    todos: tuple[str, ...]
    accelerators: str  # SkyPilot's "RTX4090:2"
    commands: tuple[str, ...]  # the commands in order, as README.txt lists them
    launch: str  # the one that starts the job: `sky launch -c gpuplan sky.yaml …`
