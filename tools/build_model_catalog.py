"""One-off: build planner/data/models.json from the shared reference tables.

Run from the repository root: `python tools/build_model_catalog.py [SHARED_DATA_DIR]`.
Not shipped in the package; the output file is, with the source of every entry.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path

DEFAULT_SHARED_DATA = Path("/work/shared/data")
OUT = Path(__file__).resolve().parents[1] / "planner" / "data" / "models.json"
TODAY = dt.date.today().isoformat()

SHAPE_FIELDS = ("num_layers", "hidden_size", "num_heads", "vocab_size")
SHAPE_KEY = (
    "mlp",
    "num_layers",
    "hidden_size",
    "intermediate_size",
    "moe_intermediate_size",
    "num_heads",
    "num_kv_heads",
    "head_dim",
    "vocab_size",
    "num_experts",
)


def _id_letters(name: str) -> str:
    """An HF id's repo name reduced to lower-case letters, digits and dots, for prefix matching."""
    return re.sub(r"[^a-z0-9.]", "", name.split("/")[-1].lower())


def _same_shape_parent(model: dict, models: list[dict]) -> dict | None:
    """A fine-tune or mirror folds into the curated entry with its shape and most similar name."""
    shape = tuple(model[f] for f in SHAPE_KEY)
    name = _id_letters(model["hf_id"])
    best, best_len = None, 0
    for other in models:
        if tuple(other[f] for f in SHAPE_KEY) != shape:
            continue
        other_name = _id_letters(other["hf_id"])
        common = next(
            (i for i, (a, b) in enumerate(zip(name, other_name, strict=False)) if a != b),
            min(len(name), len(other_name)),
        )
        if common > best_len:
            best, best_len = other, common
    return best if best_len >= 3 else None


def _display(name: str) -> str:
    """'Llama-2-13b-hf' → 'Llama-2-13B': sizes read as people write them."""
    return re.sub(r"(?<=\d)b(?=$|-)", "B", name.removesuffix("-hf"))


def _clean_alias(alias: str) -> str:
    return alias.split("(")[0].strip()


def _from_curated(entry: dict) -> dict:
    return {
        "key": entry["key"],
        "name": _display(entry["hf_id"].split("/")[-1]),
        "hf_id": entry["hf_id"],
        "family": entry["family"],
        "mlp": "plain" if entry["architecture"] == "falcon_gelu" else "gated",
        "num_layers": entry["num_hidden_layers"],
        "hidden_size": entry["hidden_size"],
        "intermediate_size": entry["intermediate_size"],
        "moe_intermediate_size": entry["moe_intermediate_size"],
        "num_heads": entry["num_attention_heads"],
        "num_kv_heads": entry["num_key_value_heads"],
        "head_dim": entry["head_dim"],
        "vocab_size": entry["vocab_size"],
        "tie_embeddings": bool(entry["tie_word_embeddings"]),
        "num_experts": entry["num_experts"],
        "experts_per_token": entry["num_experts_per_tok"],
        "max_context": entry["max_position_embeddings"],
        "aliases": sorted({_clean_alias(a) for a in entry["aliases"]}),
        "ids": [],
        "source": "; ".join(entry["sources"][:2]),
        "date": TODAY,
    }


def _from_more(model_id: str, entry: dict) -> dict:
    notes = entry.get("notes") or ""
    intermediate = entry["intermediate_size"]
    if "is the SUM" in notes:  # Qwen1 stores gate+up together; each projection is half
        intermediate //= 2
    context = re.search(r"(?:max_sequence_length|seq_length) (\d+)", notes)
    org, _, name = model_id.partition("/")
    heads = entry["num_attention_heads"]
    return {
        "key": name.lower(),
        "name": _display(name),
        "hf_id": model_id,
        "family": re.split(r"[-_.\d]", name.lower())[0] or org.lower(),
        "mlp": "plain" if "non-gated" in notes.lower() else "gated",
        "num_layers": entry["num_hidden_layers"],
        "hidden_size": entry["hidden_size"],
        "intermediate_size": intermediate,
        "moe_intermediate_size": entry["moe_intermediate_size"],
        "num_heads": heads,
        "num_kv_heads": entry["num_key_value_heads"] or heads,
        "head_dim": entry["head_dim"] or entry["hidden_size"] // heads,
        "vocab_size": entry["vocab_size"],
        "tie_embeddings": bool(entry["tie_word_embeddings"]),
        "num_experts": entry["num_experts"],
        "experts_per_token": entry["experts_per_token"],
        "max_context": int(context.group(1)) if context else None,
        "aliases": [],
        "ids": [],
        "source": f"{entry['architecture_source']} (confidence: {entry['confidence']})",
        "date": TODAY,
    }


def main(shared_data: Path) -> None:
    curated = json.loads((shared_data / "models.json").read_text())["models"]
    more = json.loads((shared_data / "model_shapes_more.json").read_text())["models"]
    models = [_from_curated(m) for m in curated]
    by_id = {m["hf_id"].lower(): m for m in models}
    pointers: list[tuple[str, str, str]] = []
    for raw_id, entry in more.items():
        model_id, _, note = raw_id.partition(" (")
        if entry.get("same_architecture_as"):
            pointers.append((model_id, entry["same_architecture_as"], note.rstrip(")")))
            continue
        if model_id.lower() in by_id or entry.get("num_hidden_layers") is None:
            continue  # already curated, or no verified shape to plan from
        model = _from_more(model_id, entry)
        if note:
            model["aliases"].append(note.rstrip(")"))
        parent = _same_shape_parent(model, models)
        if parent is not None:
            parent["ids"].append(model_id)
            by_id[model_id.lower()] = parent
            continue
        models.append(model)
        by_id[model_id.lower()] = model
    for model_id, target, note in pointers:
        canonical = by_id[target.lower()]
        if model_id.lower() != canonical["hf_id"].lower():
            canonical["ids"].append(model_id)
        if note:
            canonical["aliases"].append(note)
    unplannable = [model["key"] for model in models if not all(model[f] for f in SHAPE_FIELDS)]
    if unplannable:
        sys.exit(f"no usable {'/'.join(SHAPE_FIELDS)} for: {', '.join(unplannable)}")
    doc = {
        "about": (
            "Architectures gpuplan plans from. Built by tools/build_model_catalog.py from the "
            "project's reference tables (models.json: configs read from litgpt/mlc-llm/HF; "
            "model_shapes_more.json: config.json copies). intermediate_size is the width of ONE "
            "gate/up projection (per expert for MoE); mlp 'gated' = 3 matrices, 'plain' = 2. "
            "ids: fine-tunes, mirrors and quantised repacks with the same shape."
        ),
        "built": TODAY,
        "models": models,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(models)} architectures to {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SHARED_DATA)
