"""Ranking claims as people write them: the grammar, parsed into typed claims.

Forms (spaces around the operators, since model names contain hyphens):
``A > B`` (or ``A < B``), ``A > B + d`` (superiority by d points), ``A >= B - d``
(non-inferiority by d points),
``|A - B| < d`` (equivalence), ``best: A``, ``top k: A``, and, where the run has costs,
``A >= B - d at <= x cost`` (non-inferior by d points at no more than x times B's cost) and
``A on frontier`` (on the cost-accuracy frontier), each optionally followed by ``at pass@K``
(``pass^K``, ``maj@K``: the claim is about that item score of the questions' samples, whatever
score the run reads) and ``in CATEGORY``. :func:`parse_claims` checks names against the data
when given models and categories; :func:`check_claims` is what the workflow runs
before it writes anything. The verdicts are in :mod:`evalbars.readings.claims`.

Margins have a unit (:data:`UNITS`): accuracy points for item-level scores (the default:
``d`` under 100, and a bare ``d`` under 1 refused as a likely proportion), or Elo points for
pairwise battles (``unit="elo"``: any positive ``d``, written bare, ``d Elo`` or ``d points``;
:mod:`evalbars.readings.battle_verdicts`). A margin written in the other unit is refused.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from evalbars.data.readers.common import hint_style
from evalbars.errors import ConfigError, InputError
from evalbars.stats.repeats.pass_at_k import parse_item_score
from evalbars.stats.repeats.score_matrix import score_label
from evalbars.units import points_hint

__all__ = [
    "KINDS",
    "UNITS",
    "COST_KINDS",
    "Claim",
    "ClaimError",
    "parse_claim",
    "parse_claims",
    "read_claims_file",
    "check_claims",
    "unshared_error",
    "claim_config_error",
]

KINDS = (
    "superiority",
    "noninferiority",
    "equivalence",
    "best",
    "top",
    "noninferior_at_cost",
    "on_frontier",
)
#: The kinds that need a cost per question (a price table, or a cost column).
COST_KINDS = ("noninferior_at_cost", "on_frontier")
#: Units of a claim's margin: accuracy points (item-level scores) or Elo points (battles).
UNITS = ("points", "elo")

_FORMS = (
    "'A > B', 'A > B + d', 'A >= B - d', '|A - B| < d', 'best: A', 'top k: A', "
    "'A >= B - d at <= x cost' or 'A on frontier', optionally followed by 'at pass@K' "
    "(or pass^K, maj@K) and 'in CATEGORY'"
)
# A signed number, so that '< -2' is read as a (wrong) margin, not as a model named '-2'.
_NUMBER = r"[-+]?\s*(?:\d+(?:\.\d*)?|\.\d+)"
_MARGIN = r"(?P<d>" + _NUMBER + r")\s*(?P<unit>points?|pts?|%|(?i:elo)(?:\s+(?i:points?))?)?"
_PATTERNS = (
    ("best", re.compile(r"best\s*:\s*(?P<a>\S.*)", re.I)),
    (
        "noninferior_at_cost",
        re.compile(
            r"(?P<a>\S.*?)\s+>=\s+(?P<b>\S.*?)\s+-\s+"
            + _MARGIN
            + r"\s+at\s+<=\s*(?P<x>[-+]?\s*(?:\d+(?:\.\d*)?|\.\d+))\s*(?:x|times)?\s+cost",
            re.I,
        ),
    ),
    ("on_frontier", re.compile(r"(?P<a>\S.*?)\s+on\s+(?:the\s+)?frontier", re.I)),
    ("top", re.compile(r"top(?:-|\s*)(?P<k>[-+]?\s*\d+(?:\.\d*)?)\s*:\s*(?P<a>\S.*)", re.I)),
    (
        "equivalence",
        re.compile(r"\|\s*(?P<a>\S.*?)\s+-\s+(?P<b>\S.*?)\s*\|\s*<\s*" + _MARGIN),
    ),
    ("noninferiority", re.compile(r"(?P<a>\S.*?)\s+>=\s+(?P<b>\S.*?)\s+-\s+" + _MARGIN)),
    ("superiority", re.compile(r"(?P<a>\S.*?)\s+>\s+(?P<b>\S.*?)\s+\+\s+" + _MARGIN)),
    ("superiority", re.compile(r"(?P<a>\S.*?)\s+>\s+(?P<b>\S.*)")),
    ("inferiority", re.compile(r"(?P<a>\S.*?)\s+<\s+(?P<b>\S.*)")),
)
_CATEGORY_SPLIT = re.compile(r"\s+in\s+")
#: ``... at pass@5``: an item score over k samples, at the end of the claim or before its category.
_AT_SCORE = re.compile(r"\s+at\s+(?P<score>(?:pass@|pass\^|maj@|majority@)\s*\S+)\s*$", re.I)


class ClaimError(InputError):
    """A claim that cannot be read or does not fit the data; the message names the claim."""

    def __init__(self, text: str, problem: str):
        super().__init__(f"claim {text!r}", problem)


@dataclass(frozen=True)
class Claim:
    """One parsed claim. ``margin`` is in ``unit`` (:data:`UNITS`: accuracy points, or Elo
    points for battles); ``k`` is 1 for ``best``; ``cost_ratio`` is the x of
    ``A >= B - d at <= x cost``; ``score`` the item score of ``at pass@K``, or None."""

    text: str
    kind: str
    model_a: str
    model_b: str | None = None
    margin: float = 0.0
    k: int = 1
    category: str | None = None
    extra: dict = field(default_factory=dict, compare=False, repr=False)
    unit: str = "points"
    score: str | None = None
    cost_ratio: float = 1.0

    @property
    def label(self) -> str:
        """The claim in canonical spelling (a margin under 1 point with its unit; an Elo
        margin always with its unit)."""
        a, b = self.model_a, self.model_b
        if self.unit == "elo":
            d = f"{self.margin:g} Elo"
        else:
            d = f"{self.margin:g}" + (" points" if self.margin < 1 else "")
        body = {
            "superiority": f"{a} > {b}" + (f" + {d}" if self.margin else ""),
            "noninferiority": f"{a} >= {b} - {d}",
            "equivalence": f"|{a} - {b}| < {d}",
            "best": f"best: {a}",
            "top": f"top {self.k}: {a}",
            "noninferior_at_cost": f"{a} >= {b} - {d} at <= {self.cost_ratio:g} cost",
            "on_frontier": f"{a} on frontier",
        }[self.kind]
        score = f" at {self.score}" if self.score else ""
        return body + score + (f" in {self.category}" if self.category else "")


def _match_name(text: str, name: str, known, what: str) -> str:
    if known is None or name in known:
        return name
    folded = [k for k in known if k.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listing = ", ".join(sorted(known))
    plural = {"category": "categories"}.get(what, f"{what}s")
    raise ClaimError(text, f"unknown {what} {name!r}{hint} ({plural}: {listing})")


def _split_category(text: str, categories):
    """``(body, category)``: the claim split at the ' in ' whose remainder is a category."""
    splits = list(_CATEGORY_SPLIT.finditer(text))
    if not splits:
        return text, None
    if categories is not None:
        lowered = {c.lower(): c for c in categories}
        for match in splits:
            rest = text[match.end() :].strip()
            if rest.lower() in lowered:
                return text[: match.start()].strip(), lowered[rest.lower()]
    match = splits[0]
    rest = text[match.end() :].strip()
    if categories is not None:
        _match_name(text, rest, categories, "category")  # raises, naming the category
    return text[: match.start()].strip(), rest


def parse_claim(text: str, models=None, categories=None, *, unit: str = "points") -> Claim:
    """Parse one claim; with ``models`` and ``categories``, check its names against the data.

    ``unit`` is the unit of its margin (:data:`UNITS`); the checks of a margin below are those
    of accuracy points, an Elo margin (``unit="elo"``, battles) need only be positive and
    finite, and may be written ``d``, ``d Elo`` or ``d points``.

    Raises :class:`ClaimError` (one line naming the claim and the problem) for a
    malformed claim, an unknown model or category, a model compared with itself,
    a margin outside (0, 100) points (a negative one included: ``< -2`` is a margin,
    not a model named ``-2``), a bare margin under 1 point (likely a proportion:
    ``0.02`` is refused with "did you mean 2 points?", ``0.02 points`` is kept), a
    margin subtracted in ``A > B - d``, ``top k`` with k not a whole number in 1..K-1,
    or an item score that is not ``pass@K``, ``pass^K`` or ``maj@K`` (K odd).
    """
    original = str(text)
    # Model and category names are read in NFC (evalbars.data.readers.common): so is a claim,
    # or a name typed in another normal form would be an unknown model that prints the same.
    line = " ".join(unicodedata.normalize("NFC", original).split())
    if not line:
        raise ClaimError(original, f"empty; write {_FORMS}")
    line, score = _at_score(original, line)
    body, category = _split_category(line, categories)
    if score is None:  # 'A > B at pass@5 in math'
        body, score = _at_score(original, body)
    found = [(kind, pattern.fullmatch(body)) for kind, pattern in _PATTERNS]
    kind, match = next(((k, m) for k, m in found if m), (None, None))
    if match is None:
        _malformed(original, body)
    groups = match.groupdict()
    kind, a, b = _named_models(original, kind, groups, models)
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    margin = _margin(original, groups, unit) if groups.get("d") else 0.0
    k = _whole(groups["k"]) if groups.get("k") else 1
    if k is None or k < 1:
        raise ClaimError(original, f"'top k' needs a whole number k >= 1, got {groups['k']!r}")
    if kind == "top" and models is not None and not 1 <= k < len(models):
        raise ClaimError(
            original, f"'top {k}' needs 1 <= k < {len(models)}, the number of models in the data"
        )
    if kind == "top" and k == 1:
        kind = "best"
    ratio = _cost_ratio(original, groups["x"]) if groups.get("x") else 1.0
    return Claim(
        original, kind, a, b, margin, k, category, unit=unit, score=score, cost_ratio=ratio
    )


def _named_models(original: str, kind: str, groups: dict, models) -> tuple[str, str, str | None]:
    """``(kind, a, b)`` of a matched claim: names checked against ``models``, and ``B < A``
    turned into ``A > B``."""
    a, b = groups["a"].strip(), (groups.get("b") or "").strip() or None
    if models is not None and kind in ("inferiority", "superiority"):
        refuse = _refuse_a_reversed_margin if kind == "inferiority" else _refuse_a_margin
        for name in (a, b):
            refuse(original, name, models)
    if kind == "inferiority":
        kind, a, b = "superiority", b, a
    a = _match_name(original, a, models, "model")
    if b is not None:
        b = _match_name(original, b, models, "model")
        if a == b:
            raise ClaimError(original, f"compares {a!r} with itself")
    return kind, a, b


def _cost_ratio(text: str, written: str) -> float:
    """The x of ``A >= B - d at <= x cost``: a positive number."""
    ratio = float(written.replace(" ", ""))
    if not 0 < ratio < float("inf"):
        raise ClaimError(text, f"the cost ratio x must be a positive number, got {written!r}")
    return ratio


def _at_score(text: str, line: str) -> tuple[str, str | None]:
    """``(line, score)``: the line without its trailing ``at pass@K``, and the score written
    canonically (``pass@5``, ``pass^3``, ``maj@5``), or the line as it is and None."""
    found = _AT_SCORE.search(line)
    if found is None:
        return line, None
    try:
        score = score_label(*parse_item_score(found["score"].replace(" ", "")))
    except ValueError as error:
        raise ClaimError(text, str(error)) from None
    return line[: found.start()].strip(), score


def _malformed(text: str, body: str) -> None:
    """Raise the ClaimError for a claim no form matches, naming the likeliest slip."""
    plus = re.fullmatch(r"(\S.*?)\s+>=\s+(\S.*?)\s+\+\s+" + _MARGIN, body)
    if plus:
        raise ClaimError(text, f"the margin is subtracted: write 'A >= B - {plus['d'].strip()}'")
    if re.fullmatch(r"(\S.*?)\s+>=\s+(\S.*)", body):
        raise ClaimError(text, "a non-inferiority claim needs a margin: 'A >= B - d'")
    raise ClaimError(text, f"malformed; write {_FORMS}")


def _margin(text: str, groups: dict, unit: str = "points") -> float:
    """The margin in ``unit``: accuracy points, refused unless 0 < d < 100, and below 1 point
    only with its unit; Elo points, refused unless positive, and in accuracy's ``%``."""
    written = groups["d"].replace(" ", "")
    margin = float(written)
    written_unit = (groups.get("unit") or "").lower()
    if unit == "elo":
        if margin <= 0:
            raise ClaimError(text, f"the margin must be positive Elo points, got {margin:g}")
        if written_unit == "%":
            raise ClaimError(
                text,
                f"battles' margins are Elo points, not %: write '{written}' or '{written} Elo'",
            )
        return margin
    if written_unit.startswith("elo"):
        raise ClaimError(
            text,
            "an Elo margin on item-level scores: margins are accuracy points here (Elo margins "
            "are for pairwise battles)",
        )
    if margin <= 0:
        raise ClaimError(text, f"the margin must be positive points, got {margin:g}")
    if margin >= 100:
        raise ClaimError(text, f"the margin must be below 100 points, got {margin:g}")
    hint = points_hint(margin)
    if hint and not groups.get("unit"):
        raise ClaimError(
            text,
            f"a margin of {margin:g} points is below 1 point: {hint} (margins are accuracy "
            f"points; write '{written} points' if you mean it)",
        )
    return margin


def _whole(text: str) -> int | None:
    number = float(text.replace(" ", ""))
    return int(number) if number == int(number) else None


def _refuse_a_margin(text: str, b: str, models) -> None:
    """'A > B - 2' names no model 'B - 2': a subtracted margin belongs to a non-inferiority
    claim (a superiority margin is added: 'A > B + 2')."""
    if b in models:
        return
    found = re.fullmatch(r"(?P<b>\S.*?)\s*-\s*" + _MARGIN, b)
    if found and found["b"].lower() in {m.lower() for m in models}:
        d = found["d"].lstrip("+-").strip()
        raise ClaimError(
            text,
            f"'A > B' subtracts no margin; for non-inferiority by {d} points write "
            f"'A >= B - {d}', for superiority by {d} points 'A > B + {d}'",
        )


def _refuse_a_reversed_margin(text: str, name: str, models) -> None:
    """'A < B + 3' names no model 'B + 3': a margin is written from the better model's side."""
    if name in models:
        return
    found = re.fullmatch(r"(?P<b>\S.*?)\s*[-+]\s*" + _MARGIN, name)
    if found and found["b"].lower() in {m.lower() for m in models}:
        d = found["d"].lstrip("+-").strip()
        raise ClaimError(
            text,
            f"'A < B' takes no margin; write it from the better side: 'B > A + {d}' for "
            f"superiority by {d} points, or 'B >= A - {d}' for non-inferiority",
        )


def parse_claims(texts, models=None, categories=None, *, unit: str = "points") -> list[Claim]:
    """Parse several claims (texts, or :class:`Claim` objects kept as they are), their margins
    in ``unit`` (:func:`parse_claim`); a claim listed twice (same canonical form) is an error."""
    claims, seen = [], {}
    for text in texts:
        claim = (
            text if isinstance(text, Claim) else parse_claim(text, models, categories, unit=unit)
        )
        if claim.label in seen:
            raise ClaimError(claim.text, f"listed twice (also as {seen[claim.label]!r})")
        seen[claim.label] = claim.text
        claims.append(claim)
    return claims


def read_claims_file(path) -> list[str]:
    """Claims from a text file, one a line; blank lines and lines starting with '#' are skipped.

    A claim on two lines (the same canonical form, however spaced) is refused naming the
    file and the second line (1-based); other problems are the claim's own, found when it is
    checked against the data.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # past a BOM, as CSV
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(path, f"cannot read claims file: {reason}") from exc
    texts, seen = [], {}
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            label = parse_claim(text).label
        except ClaimError:
            label = None
        if label in seen:
            raise InputError(
                path, f"claim {text!r} is listed twice (first at record {seen[label]})", number
            )
        if label is not None:
            seen[label] = number
        texts.append(text)
    return texts


def unshared_error(claim: Claim, rival: str) -> ClaimError:
    """The error of a claim that compares ``claim.model_a`` with ``rival``, a model with which
    it shares no question (in the claim's category, if it names one)."""
    where = f" in {claim.category!r}" if claim.category else ""
    problem = f"{claim.model_a!r} and {rival!r} share no question{where}"
    if claim.kind in ("best", "top", "on_frontier"):
        problem += f" ('{claim.label}' compares {claim.model_a!r} with every other model)"
    return ClaimError(claim.text, problem)


def check_claims(texts, models, categories, *, unit: str = "points") -> list:
    """The configured claims parsed against the data (margins in ``unit``), or a ConfigError
    naming the claim and the key."""
    try:
        return parse_claims(texts, models, categories, unit=unit)
    except ClaimError as exc:
        raise claim_config_error(exc, "to name the analysed data") from exc


def claim_config_error(exc: ClaimError, purpose: str = "") -> ConfigError:
    """The ConfigError of a configured claim the data refuse: the claim's own message, and in
    the workflow where to edit it (``purpose`` says what for)."""
    if hint_style() == "cli":  # the message names the claim as the user typed it
        return ConfigError(str(exc))
    return ConfigError(f"{exc}; edit `claims:` in the config" + (f" {purpose}" if purpose else ""))
