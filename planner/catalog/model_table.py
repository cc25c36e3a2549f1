"""The model catalog as rows: what `gpuplan models [FILTER]` prints and README's table holds."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from planner.catalog.models import ModelArch, all_models, out_of_scope_models, squash


@dataclass(frozen=True, slots=True)
class ModelRow:
    key: str
    name: str
    hf_id: str | None
    kind: str
    total_params_b: float | None
    active_params_b: float | None  # MoE only: per token, embeddings included
    max_context: int | None
    planned: bool
    source: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _matches(words: str, *fields: str | None) -> bool:
    wanted = squash(words)
    return not wanted or any(wanted in squash(f) for f in fields if f)


# What makes a source a citation a reader can follow: a repository path, a URL, a paper.
_FOLLOWABLE = ("github:", "http", "huggingface.co", "transformers ", "arxiv", "model card")
# Notes about how a source was found, not where it is.
_INTERNAL = ("search-index", "search index", "not disclosed")


def _first_source(source: str, hf_id: str | None = None) -> str:
    """The first source an entry names that a reader can follow (the rest are cross-checks),
    without the internal notes of how it was found; else the checkpoint's own config.json."""
    for part in (p.strip() for chunk in source.split(" | ") for p in chunk.split("; ")):
        part = part.split("search corpus: ", 1)[-1]
        lowered = part.lower()
        if any(word in lowered for word in _FOLLOWABLE) and not any(
            note in lowered for note in _INTERNAL
        ):
            return part.split(": ", 1)[1] if part.split(": ", 1)[0] in _LABELS else part
    return f"https://huggingface.co/{hf_id}/blob/main/config.json" if hf_id else source


_LABELS = ("params", "shapes", "cross-check", "verbatim + safetensors census")


def _searchable(arch: ModelArch) -> tuple[str | None, ...]:
    moe = ("moe",) if arch.is_moe else ()
    return (arch.key, arch.name, arch.hf_id, arch.family, arch.kind, *moe, *arch.aliases)


def model_rows(filter_text: str = "") -> list[ModelRow]:
    """Every catalog model whose name, id, family, kind or alias contains `filter_text` (loose:
    case, separators and variant words ignored), planned models first."""
    rows = [
        ModelRow(
            key=arch.key,
            name=arch.name,
            hf_id=arch.hf_id,
            kind=arch.kind,
            total_params_b=round(arch.total_params / 1e9, 3),
            active_params_b=round(arch.active_params / 1e9, 3) if arch.is_moe else None,
            max_context=arch.max_context,
            planned=True,
            source=_first_source(arch.source, arch.hf_id),
        )
        for arch in all_models()
        if _matches(filter_text, *_searchable(arch))
    ]
    rows += [
        ModelRow(
            key=other.key,
            name=other.name,
            hf_id=other.hf_id,
            kind=other.kind,
            total_params_b=None,
            active_params_b=None,
            max_context=None,
            planned=False,
            source=_first_source(other.source, other.hf_id),
        )
        for other in out_of_scope_models()
        if _matches(filter_text, other.key, other.name, other.hf_id, other.kind)
    ]
    return rows


def _billions(value: float | None) -> str:
    return "" if value is None else f"{value:,.2f}"


def markdown_table(rows: list[ModelRow]) -> str:
    """A Markdown table of `rows` (README's model table is this, for every model)."""
    lines = [
        "| model | HF id | kind | total (B) | active (B) | context | source |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        context = f"{row.max_context:,}" if row.max_context else ""
        total = _billions(row.total_params_b) if row.planned else "out of scope"
        source = row.source.replace("|", "/")
        lines.append(
            f"| {row.name} | {row.hf_id or ''} | {row.kind} | {total} | "
            f"{_billions(row.active_params_b)} | {context} | {source} |"
        )
    return "\n".join(lines)
