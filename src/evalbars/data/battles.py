"""Pairwise battles: LMArena battle files, Arena-Hard-Auto judgments and plain tables.

A battle is one comparison of two models' answers: ``model_a``, ``model_b`` and ``winner``
(``model_a``, ``model_b``, ``tie`` or ``tie (bothbad)``, as LMArena writes them). Every format is
read into the same columns (:data:`BATTLE_COLUMNS`): ``outcome`` (the score of ``model_a``: 1,
0.5 for either tie, 0), ``weight``, ``prompt_id``, ``judge`` (a voter or a judge model),
``category``, ``game`` (Arena-Hard-Auto's 1 or 2, the order of the answers), the style columns
``tokens_a, tokens_b, headers_a, headers_b, lists_a, lists_b, bold_a, bold_b`` where the format
has them, and ``record`` (1-based: the row of a table, the entry of a JSON list, the line of a
JSON-lines file). The format is recognised by content, whatever the file's name:

``lmarena``
    LMArena's public battle files (``arena-human-preference-100k``/``-140k``, FastChat's
    ``clean_battle`` output): Parquet, a JSON list or JSON lines of records with ``model_a,
    model_b, winner``; ``question_id`` becomes ``prompt_id``, ``judge`` (``arena_user_...``)
    stays, ``evaluation_session_id`` becomes ``judge`` where there is no judge (one person's
    session), and ``conv_metadata`` gives the style columns (``sum_assistant_a_tokens``; the
    sums of ``header_count_a``, ``list_count_a`` and ``bold_count_a``, dictionaries of counts by
    kind). The Kaggle form with one-hot ``winner_model_a, winner_model_b, winner_tie`` is read
    too.
``arena_hard``
    Arena-Hard-Auto's judgment files (``data/<bench>/model_judgment/<judge>/<model>.jsonl``):
    one line per (prompt, model) with ``uid`` (``question_id`` in v0.1), ``model``,
    ``baseline`` (v2; pass ``baseline=`` for v0.1), ``judge``, ``category`` and two ``games``.
    Game 1 shows the baseline as assistant A and the model as B; game 2 swaps them. Each game
    is one battle with A as ``model_a``; its verdict ``A>>B, A>B, A=B, B>A, B>>A`` (or the
    mirrored spellings ``A<B, A<<B, B<A, B<<A, B=A``) gives the winner, and a strong verdict
    (``>>``) the weight ``strong_weight`` (3, as ``show_result.py`` counts it three times). A
    line with a game the judge left without a verdict is dropped whole, as ``show_result.py``
    drops it (counted in ``attrs["dropped_judgments"]``). ``answers=`` (the
    ``model_answer`` folder) adds the style columns from each answer's ``metadata``
    (``token_len``, ``header_count``, ``list_count``, ``bold_count``).
``table``
    CSV, TSV or Parquet with ``model_a, model_b, winner`` (``winner`` may also name the winning
    model), and optional ``prompt_id`` (or ``question_id``), ``judge`` (or ``voter``),
    ``category``, ``weight`` and the style columns.

JSON files may be gzip-compressed (public dumps usually are). Fatal, in one line naming the
file and the record: a missing column, an empty model name, a name with a control character, a
model battling itself, an unknown winner or verdict, a negative or non-numeric weight, no
battles at all. :func:`battles_preview` counts what was read and refuses a comparison graph in
pieces.
"""

from __future__ import annotations

import gzip
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy.sparse import csgraph

from evalbars.data.readers.common import blank_cells, few
from evalbars.errors import CONTROL_CHARACTERS, InputError, control_character, plain

__all__ = [
    "BATTLE_COLUMNS",
    "WINNERS",
    "STYLE_A",
    "STYLE_B",
    "VERDICTS",
    "STRONG_WEIGHT",
    "FOLDER_PATTERNS",
    "read_battles",
    "BattlesPreview",
    "battles_preview",
]

log = logging.getLogger(__name__)

#: Winner values and the score of model_a they mean.
WINNERS = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
#: Style columns of model_a and of model_b, in the same order (tokens, headers, lists, bold).
STYLE_A = ("tokens_a", "headers_a", "lists_a", "bold_a")
STYLE_B = ("tokens_b", "headers_b", "lists_b", "bold_b")
#: Columns of every battle frame (the style columns only where the format has them).
BATTLE_COLUMNS = [
    "model_a",
    "model_b",
    "winner",
    "outcome",
    "weight",
    "prompt_id",
    "judge",
    "category",
    "game",
    *(c for pair in zip(STYLE_A, STYLE_B, strict=True) for c in pair),
    "record",
]
#: Arena-Hard-Auto verdicts: (winner, strong) with A as model_a.
VERDICTS = {
    "A>>B": ("model_a", True),
    "A>B": ("model_a", False),
    "A=B": ("tie", False),
    "B>A": ("model_b", False),
    "B>>A": ("model_b", True),
    "A<<B": ("model_b", True),
    "A<B": ("model_b", False),
    "B=A": ("tie", False),
    "B<A": ("model_a", False),
    "B<<A": ("model_a", True),
}
#: Weight of a strong verdict in Arena-Hard-Auto's ``show_result.py`` (``weight=3``).
STRONG_WEIGHT = 3.0
_LMARENA_METADATA = {
    "tokens": "sum_assistant_{}_tokens",
    "headers": "header_count_{}",
    "lists": "list_count_{}",
    "bold": "bold_count_{}",
}
_ANSWER_METADATA = {
    "tokens": "token_len",
    "headers": "header_count",
    "lists": "list_count",
    "bold": "bold_count",
}
_ONE_HOT = ("winner_model_a", "winner_model_b", "winner_tie")
_ALIASES = {"question_id": "prompt_id", "voter": "judge"}


def _text_of(path: Path) -> str:
    """The file as text (gunzipped if need be), or an InputError naming the byte."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InputError(path, f"gzip data that cannot be decompressed: {exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(path, f"is not UTF-8 text (byte {exc.start:,})", line) from None


def _json_records(path: Path, text: str) -> list:
    """``[(record, object), ...]`` of a JSON list or of JSON lines."""
    if text.lstrip().startswith("["):
        try:
            entries = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        return list(enumerate(entries, start=1))
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(path, f"is not a JSON line: {exc.msg}", number) from None
    return records


def _count(value) -> float:
    """A style count as published: a number, or a dictionary of counts by kind (summed)."""
    if isinstance(value, dict):
        return float(sum(value.values()))
    return np.nan if value is None else float(value)


def _lmarena_rows(path, records) -> pd.DataFrame:
    rows = []
    for record, entry in records:
        if not isinstance(entry, dict):
            raise InputError(path, "a battle must be a JSON object", record)
        row = {"record": record}
        for key in ("model_a", "model_b", "winner", "question_id", "judge", "category", *_ONE_HOT):
            if key in entry:
                row[key] = entry[key]
        if "judge" not in entry and "evaluation_session_id" in entry:
            row["judge"] = entry["evaluation_session_id"]
        metadata = entry.get("conv_metadata")
        if isinstance(metadata, dict):
            for name, key in _LMARENA_METADATA.items():
                for side in "ab":
                    row[f"{name}_{side}"] = _count(metadata.get(key.format(side)))
        rows.append(row)
    return pd.DataFrame(rows)


def _arena_hard_rows(path, records, strong_weight, baseline) -> tuple[pd.DataFrame, int]:
    rows, dropped = [], 0
    for record, entry in records:
        if not isinstance(entry, dict) or not isinstance(entry.get("games"), list):
            raise InputError(path, "a judgment must be a JSON object with a list of games", record)
        games = entry["games"]
        if len(games) != 2:
            raise InputError(path, f"a judgment has 2 games, this one {len(games)}", record)
        if any(not isinstance(g, dict) or g.get("score") is None for g in games):
            dropped += 1  # show_result.py drops a judgment with a game left without a verdict
            continue
        model, base = entry.get("model"), entry.get("baseline", baseline)
        if base is None:
            raise InputError(
                path,
                "the judgment names no baseline (Arena-Hard-Auto v0.1 files do not): pass "
                "baseline=, e.g. 'gpt-4-0314' for arena-hard-v0.1",
                record,
            )
        prompt = entry.get("uid", entry.get("question_id"))
        for game, (first, second) in enumerate(((base, model), (model, base)), start=1):
            label = str(games[game - 1]["score"]).strip()
            if label not in VERDICTS:
                raise InputError(
                    path,
                    f"game {game} has the verdict {label!r}; expected one of {list(VERDICTS)}",
                    record,
                )
            winner, strong = VERDICTS[label]
            rows.append(
                {
                    "model_a": first,
                    "model_b": second,
                    "winner": winner,
                    "weight": strong_weight if strong else 1.0,
                    "prompt_id": prompt,
                    "judge": entry.get("judge"),
                    "category": entry.get("category"),
                    "game": game,
                    "record": record,
                }
            )
    return pd.DataFrame(rows), dropped


#: Files a folder of battles is read from (an Arena-Hard-Auto judge's folder holds one per model).
FOLDER_PATTERNS = ("*.jsonl", "*.jsonl.gz", "*.json", "*.json.gz", "*.csv", "*.tsv", "*.parquet")


def _files_of(folder: Path) -> list[Path]:
    return sorted({f for pattern in FOLDER_PATTERNS for f in folder.glob(pattern)})


def _answer_style(frame: pd.DataFrame, answers) -> pd.DataFrame:
    """Style columns of Arena-Hard-Auto battles from the answers' ``metadata``."""
    answers = Path(answers)
    style = {}
    for file in _files_of(answers):
        for record, entry in _json_records(file, _text_of(file)):
            metadata = entry.get("metadata") if isinstance(entry, dict) else None
            if not isinstance(metadata, dict):
                raise InputError(file, "an answer without metadata", record)
            style[entry.get("model"), entry.get("uid")] = [
                _count(metadata.get(key)) for key in _ANSWER_METADATA.values()
            ]
    for side, names in (("a", STYLE_A), ("b", STYLE_B)):
        keys = list(zip(frame[f"model_{side}"], frame["prompt_id"], strict=True))
        missing = [key for key in keys if key not in style]
        if missing:
            raise InputError(answers, f"no answer of model {missing[0][0]!r} to {missing[0][1]!r}")
        frame[list(names)] = np.array([style[key] for key in keys], dtype=float)
    return frame


def _read_table(path: Path, parquet: bool) -> pd.DataFrame:
    wanted = {"model_a", "model_b", "winner", "prompt_id", "question_id", "judge", "voter",
              "category", "weight", *STYLE_A, *STYLE_B, *_ONE_HOT}  # fmt: skip
    try:
        if parquet:
            names = pq.read_schema(path).names
            extra = {"conv_metadata", "evaluation_session_id"}
            frame = pd.read_parquet(path, columns=[c for c in names if c in wanted | extra])
        else:
            sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            text = {c: str for c in ("model_a", "model_b", "winner", "prompt_id", "question_id",
                                     "judge", "voter", "category")}  # fmt: skip
            frame = pd.read_csv(path, sep=sep, dtype=text, keep_default_na=False, na_values=[""])
    except Exception as exc:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise InputError(path, f"cannot read table: {exc}") from None
    if "judge" not in frame.columns and "evaluation_session_id" in frame.columns:
        frame = frame.rename(columns={"evaluation_session_id": "judge"})
    if "conv_metadata" in frame.columns:  # LMArena's published Parquet
        for name, key in _LMARENA_METADATA.items():
            for side in "ab":
                frame[f"{name}_{side}"] = [
                    _count(m.get(key.format(side))) if isinstance(m, dict) else np.nan
                    for m in frame["conv_metadata"]
                ]
    frame = frame.rename(columns={k: v for k, v in _ALIASES.items() if v not in frame.columns})
    frame["record"] = np.arange(1, len(frame) + 1)
    return frame


def _winner_from_one_hot(path, frame) -> pd.Series:
    flags = frame[list(_ONE_HOT)].apply(pd.to_numeric, errors="coerce").fillna(-1).to_numpy()
    ok = np.isin(flags, (0, 1)).all(axis=1) & (flags.sum(axis=1) == 1)
    if not ok.all():
        i = int(np.argmax(~ok))
        raise InputError(
            path, f"exactly one of {list(_ONE_HOT)} must be 1", plain(frame["record"].iloc[i])
        )
    return pd.Series(
        np.array(["model_a", "model_b", "tie"])[flags.argmax(axis=1)], index=frame.index
    )


def _check_names(path, frame, record) -> None:
    """Refuse an empty model or winner, a control character in a name, a self-battle."""
    for column in ("model_a", "model_b", "winner"):
        blank = blank_cells(frame[column])
        if blank.any():
            raise InputError(path, f"empty {column}", plain(record[int(blank.argmax())]))
        frame[column] = frame[column].astype(str)
    for column in ("model_a", "model_b", "judge", "category"):
        if column in frame.columns:
            values = frame[column].astype("string")
            bad = values.str.contains(CONTROL_CHARACTERS.pattern, regex=True).fillna(False)
            if bad.any():
                i = int(bad.to_numpy().argmax())
                raise InputError(path, control_character(column, values.iloc[i]), plain(record[i]))
    same = (frame["model_a"] == frame["model_b"]).to_numpy()
    if same.any():
        i = int(same.argmax())
        raise InputError(
            path, f"model {frame['model_a'].iloc[i]!r} battles itself", plain(record[i])
        )


def _winners(path, frame, record) -> pd.Series:
    """Canonical winners; a winner may also name the winning model (a plain table's habit)."""
    winner = frame["winner"].str.strip()
    winner = winner.mask(winner == frame["model_a"], "model_a")
    winner = winner.mask(winner == frame["model_b"], "model_b")
    unknown = ~winner.isin(list(WINNERS)).to_numpy()
    if unknown.any():
        i = int(unknown.argmax())
        raise InputError(
            path,
            f"winner {frame['winner'].iloc[i]!r} is not one of {list(WINNERS)} or a model of the "
            "battle",
            plain(record[i]),
        )
    return winner


def _weights(path, frame, record) -> np.ndarray:
    if "weight" not in frame.columns:
        return np.ones(len(frame))
    weight = pd.to_numeric(frame["weight"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(weight) | (weight < 0)
    if bad.any():
        i = int(bad.argmax())
        raise InputError(
            path,
            f"weight {plain(frame['weight'].iloc[i])!r} is not a number >= 0",
            plain(record[i]),
        )
    return weight


def _check(path, frame) -> pd.DataFrame:
    """The shared checks, and the canonical columns."""
    if frame.empty:
        raise InputError(path, "holds no battles")
    if "winner" not in frame.columns and set(_ONE_HOT) <= set(frame.columns):
        frame["winner"] = _winner_from_one_hot(path, frame)
    missing = [c for c in ("model_a", "model_b", "winner") if c not in frame.columns]
    if missing:
        raise InputError(
            path,
            f"missing column(s) {', '.join(missing)} (a battle names model_a, model_b and "
            f"winner); found {list(frame.columns)[:12]}",
        )
    record = frame["record"].to_numpy()
    _check_names(path, frame, record)
    frame["winner"] = _winners(path, frame, record)
    frame["outcome"] = frame["winner"].map(WINNERS).astype(float)
    frame["weight"] = _weights(path, frame, record)
    for column in ("prompt_id", "judge", "category", "game"):
        if column not in frame.columns:
            frame[column] = pd.NA
    frame["prompt_id"] = frame["prompt_id"].astype("string")
    for column in (*STYLE_A, *STYLE_B):
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame[[c for c in BATTLE_COLUMNS if c in frame.columns]].reset_index(drop=True)


def read_battles(
    path,
    *,
    strong_weight: float = STRONG_WEIGHT,
    baseline: str | None = None,
    answers=None,
) -> pd.DataFrame:
    """Read a file of battles (LMArena, Arena-Hard-Auto or a plain table; module docstring).

    Parameters
    ----------
    path : str or Path
        The file (its format is recognised by content), or a folder whose files
        (:data:`FOLDER_PATTERNS`) are read in name order and put together.
    strong_weight : float
        Weight of a strong Arena-Hard-Auto verdict (``A>>B``); 1 counts it as any win.
    baseline : str, optional
        The baseline of Arena-Hard-Auto v0.1 judgments, which do not name it.
    answers : str or Path, optional
        Arena-Hard-Auto's ``model_answer`` folder, for the style columns.

    Returns
    -------
    DataFrame
        :data:`BATTLE_COLUMNS` (the style columns where the file has them); ``attrs`` holds
        ``format``, ``source_path`` and ``dropped_judgments``.

    Raises
    ------
    InputError
        One line naming the file, the record and the problem.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "b.csv").write_text("model_a,model_b,winner\\nx,y,model_a\\ny,x,tie\\n")
    >>> read_battles(folder / "b.csv")[["model_a", "model_b", "winner", "outcome"]].values.tolist()
    [['x', 'y', 'model_a', 1.0], ['y', 'x', 'tie', 0.5]]
    """
    path = Path(path)
    if path.is_dir():
        files = _files_of(path)
        if not files:
            raise InputError(path, f"a folder with no battle files ({', '.join(FOLDER_PATTERNS)})")
        parts = [read_battles(f, strong_weight=strong_weight, baseline=baseline, answers=answers)
                 for f in files]  # fmt: skip
        frame = pd.concat(parts, ignore_index=True)
        kinds = sorted({p.attrs["format"] for p in parts})
        frame.attrs.update(
            format=kinds[0] if len(kinds) == 1 else "mixed",
            source_path=str(path),
            dropped_judgments=sum(p.attrs["dropped_judgments"] for p in parts),
        )
        return frame
    if not path.is_file():
        raise InputError(path, "no such file")
    dropped = 0
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == b"PAR1":
        frame, kind = _read_table(path, parquet=True), "table"
    else:
        text = _text_of(path)
        start = text.lstrip()[:1]
        if start in ("[", "{"):
            records = _json_records(path, text)
            if not records:
                raise InputError(path, "holds no battles")
            first = records[0][1]
            if isinstance(first, dict) and "games" in first:
                frame, dropped = _arena_hard_rows(path, records, strong_weight, baseline)
                kind = "arena_hard"
                if dropped:
                    log.warning("%s: %d judgment(s) without a verdict dropped", path, dropped)
                if frame.empty:
                    raise InputError(path, "holds no judgment with two verdicts")
                if answers is not None:
                    frame = _answer_style(frame, answers)
            else:
                frame, kind = _lmarena_rows(path, records), "lmarena"
                frame = frame.rename(columns={"question_id": "prompt_id"})
        else:
            frame, kind = _read_table(path, parquet=False), "table"
    if kind == "table" and "conv_metadata" in frame.columns:
        kind = "lmarena"
    frame = _check(path, frame)
    frame.attrs.update(format=kind, source_path=str(path), dropped_judgments=dropped)
    return frame


@dataclass(frozen=True)
class BattlesPreview:
    """What a battle file holds: counts, and the comparison graph's pieces (one when usable)."""

    models: int
    battles: int
    prompts: int | None
    ties: int
    tie_share: float
    pairs: int
    components: tuple
    per_model: pd.DataFrame

    def lines(self) -> list[str]:
        """The preview as lines of text."""
        prompts = "" if self.prompts is None else f" on {self.prompts:,} prompts"
        return [
            f"{self.battles:,} battles{prompts} between {self.models} models "
            f"({self.pairs} pairs); {self.ties:,} ties ({self.tie_share:.1%})",
            f"comparison graph: {len(self.components)} component(s)",
        ]


def battles_preview(frame: pd.DataFrame) -> BattlesPreview:
    """Models, battles, prompts, ties and the connectivity of the comparison graph.

    Raises
    ------
    InputError
        When the graph (models joined by a battle) falls into pieces: ratings in different
        pieces have no common scale. The line names the pieces.

    Examples
    --------
    >>> frame = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"],
    ...                       "outcome": [1.0, 0.5], "prompt_id": ["p", "p"]})
    >>> battles_preview(frame).lines()[0]
    '2 battles on 1 prompts between 3 models (2 pairs); 1 ties (50.0%)'
    """
    a, b = frame["model_a"].astype(str), frame["model_b"].astype(str)
    models = pd.Index(sorted(set(a) | set(b)))
    ca, cb = models.get_indexer(a), models.get_indexer(b)
    k = len(models)
    adjacency = np.zeros((k, k), dtype=bool)
    adjacency[ca, cb] = adjacency[cb, ca] = True
    n_parts, labels = csgraph.connected_components(adjacency, directed=False)
    parts = tuple(tuple(models[labels == i]) for i in range(n_parts))
    if n_parts > 1:
        shown = " and ".join("{" + few(p) + "}" for p in parts[:3])
        raise InputError(
            frame.attrs.get("source_path", "battles"),
            f"the models fall into {n_parts} groups that never battled each other ({shown}"
            f"{' and more' if n_parts > 3 else ''}): their ratings have no common scale; "
            "analyse each group on its own",
        )
    outcome = frame["outcome"].to_numpy(dtype=float)
    tie = outcome == 0.5
    counts = {
        "battles": np.bincount(ca, minlength=k) + np.bincount(cb, minlength=k),
        "wins": np.bincount(ca, outcome == 1, k) + np.bincount(cb, outcome == 0, k),
        "ties": np.bincount(ca, tie, k) + np.bincount(cb, tie, k),
    }
    per_model = pd.DataFrame({"model": models, **counts})
    per_model["losses"] = per_model["battles"] - per_model["wins"] - per_model["ties"]
    prompts = frame["prompt_id"] if "prompt_id" in frame.columns else None
    return BattlesPreview(
        models=k,
        battles=len(frame),
        prompts=None if prompts is None or prompts.isna().all() else int(prompts.nunique()),
        ties=int(tie.sum()),
        tie_share=float(tie.mean()) if len(frame) else 0.0,
        pairs=len(set(zip(np.minimum(ca, cb), np.maximum(ca, cb), strict=True))),
        components=parts,
        per_model=per_model.astype({c: int for c in ("battles", "wins", "ties", "losses")}),
    )
