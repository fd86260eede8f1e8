"""Reading battles: Arena-Hard-Auto judgments (made by its own scripts), LMArena's published
layouts (JSON, JSON lines, Parquet, the Kaggle one-hot form), plain tables; every fault in one
line; the preview and the comparison graph."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalbars.data.battles import BATTLE_COLUMNS, battles_preview, read_battles
from evalbars.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "data" / "battles"
JUDGMENTS = DATA / "arena_hard" / "model_judgment" / "stand-in-judge"
ANSWERS = DATA / "arena_hard" / "model_answer"

#: show_result.py's label_to_score (lmarena/arena-hard-auto @196f6b8), weight 3: the model's
#: scores from game 2 (the model is A) and game 1 (the model is B, hence 1 - s).
LABEL_TO_SCORE = {
    "A>B": [1],
    "A>>B": [1] * 3,
    "A=B": [0.5],
    "A<<B": [0] * 3,
    "A<B": [0],
    "B>A": [0],
    "B>>A": [0] * 3,
    "B=A": [0.5],
    "B<<A": [1] * 3,
    "B<A": [1],
}


def _raw_judgments():
    rows = []
    for file in sorted(JUDGMENTS.glob("*.jsonl.gz")):
        rows += [json.loads(line) for line in gzip.open(file, "rt")]
    return rows


def test_arena_hard_judgments_read_as_show_result_scores_them(caplog):
    with caplog.at_level(logging.WARNING):
        frame = read_battles(JUDGMENTS)
    assert frame.attrs["format"] == "arena_hard"
    raw = _raw_judgments()
    kept = [r for r in raw if all(g and g["score"] is not None for g in r["games"])]
    assert frame.attrs["dropped_judgments"] == len(raw) - len(kept) == 7
    assert "without a verdict dropped" in caplog.text
    assert len(frame) == 2 * len(kept) == 786
    assert frame["prompt_id"].nunique() == 100
    assert set(frame["judge"]) == {"stand-in-judge"}
    assert set(frame["category"]) == {"coding", "writing"}
    # Game 1 shows the baseline as A, game 2 the model.
    game1, game2 = frame[frame["game"] == 1], frame[frame["game"] == 2]
    assert set(game1["model_a"]) == set(game2["model_b"]) == {"baseline-model"}
    # show_result.py's scores of each model: the same multiset, a weight of 3 as 3 copies.
    theirs = {}
    for row in kept:
        scores = LABEL_TO_SCORE[row["games"][1]["score"]] + [
            1 - s for s in LABEL_TO_SCORE[row["games"][0]["score"]]
        ]
        theirs.setdefault(row["model"], []).extend(scores)
    model_side = np.where(
        frame["model_a"] == "baseline-model", 1 - frame["outcome"], frame["outcome"]
    )
    frame["model"] = np.where(frame["game"] == 1, frame["model_b"], frame["model_a"])
    for model, scores in theirs.items():
        mine = frame["model"] == model
        ours = np.repeat(model_side[mine], frame.loc[mine, "weight"].astype(int))
        assert sorted(ours) == sorted(scores)
        # print_leaderboard's point estimate: the mean score against the baseline.
        assert np.average(model_side[mine], weights=frame.loc[mine, "weight"]) == pytest.approx(
            np.mean(scores)
        )
    assert set(frame["weight"]) == {1.0, 3.0}


def test_the_strong_weight_is_an_option_and_answers_give_the_style_columns():
    plain = read_battles(JUDGMENTS, strong_weight=1.0)
    assert set(plain["weight"]) == {1.0}
    styled = read_battles(JUDGMENTS, answers=ANSWERS)
    first = styled.iloc[1]  # p001, game 2: model-alpha (A) against the baseline (B)
    answers = {
        json.loads(line)["uid"]: json.loads(line)
        for line in gzip.open(ANSWERS / f"{first['model_a']}.jsonl.gz", "rt")
    }
    metadata = answers[first["prompt_id"]]["metadata"]
    assert first["tokens_a"] == metadata["token_len"]
    assert first["headers_a"] == sum(metadata["header_count"].values())
    assert first["lists_a"] == sum(metadata["list_count"].values())
    assert first["bold_a"] == sum(metadata["bold_count"].values())
    assert not styled[["tokens_a", "tokens_b", "bold_b"]].isna().any().any()


def _write_lines(path: Path, rows, *, compress=False):
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if compress:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def _judgment(score1="A>B", score2="B>A", **extra):
    row = {"uid": "u1", "category": "hard_prompt", "judge": "j", "model": "m", "baseline": "b"}
    row.update(extra)
    row["games"] = [{"score": score1}, {"score": score2}]
    return row


def test_arena_hard_faults_are_one_line_naming_the_record(tmp_path):
    path = _write_lines(tmp_path / "j.jsonl", [_judgment(), _judgment(score2="A>>>B")])
    with pytest.raises(InputError, match=r"j\.jsonl, record 2: game 2 has the verdict 'A>>>B'"):
        read_battles(path)
    old = _judgment()
    del old["baseline"]
    with pytest.raises(InputError, match="names no baseline.*baseline="):
        read_battles(_write_lines(tmp_path / "old.jsonl", [old]))
    v01 = read_battles(_write_lines(tmp_path / "old.jsonl", [old]), baseline="gpt-4-0314")
    assert v01["model_a"].tolist() == ["gpt-4-0314", "m"]
    # A>B in game 1 (baseline as A) and B>A in game 2 (model as A): the baseline won both.
    assert v01["winner"].tolist() == ["model_a", "model_b"]
    one_game = _judgment()
    one_game["games"] = one_game["games"][:1]
    with pytest.raises(InputError, match="record 1: a judgment has 2 games, this one 1"):
        read_battles(_write_lines(tmp_path / "g.jsonl", [one_game]))
    none = _judgment(score1=None)
    with pytest.raises(InputError, match="no judgment with two verdicts"):
        read_battles(_write_lines(tmp_path / "n.jsonl", [none]))


def _lmarena_record(i, winner="model_a", **extra):
    record = {
        "question_id": f"q{i}",
        "model_a": "alpha",
        "model_b": "beta",
        "winner": winner,
        "judge": f"arena_user_{i % 2}",
        "turn": 1,
        "anony": True,
        "language": "English",
        "tstamp": 1.7e9 + i,
        "conversation_a": [{"role": "user", "content": "hi"}],
        "conv_metadata": {
            "sum_user_tokens": 3,
            "sum_assistant_a_tokens": 100 + i,
            "sum_assistant_b_tokens": 50,
            "context_a_tokens": 3,
            "context_b_tokens": 3,
            "turns": 1,
            "header_count_a": {"h1": 1, "h2": 2, "h3": 0, "h4": 0, "h5": 0, "h6": 0},
            "list_count_a": {"ordered": 3, "unordered": 1},
            "bold_count_a": {"**": 4, "__": 0},
            "header_count_b": {"h1": 0, "h2": 0, "h3": 0, "h4": 0, "h5": 0, "h6": 0},
            "list_count_b": {"ordered": 0, "unordered": 0},
            "bold_count_b": {"**": 1, "__": 1},
        },
    }
    record.update(extra)
    return record


def test_lmarena_json_jsonl_gzip_and_parquet_read_alike(tmp_path):
    records = [
        _lmarena_record(1),
        _lmarena_record(2, "tie (bothbad)"),
        _lmarena_record(3, "model_b"),
        _lmarena_record(4, "tie"),
    ]
    (tmp_path / "battles.json").write_text(json.dumps(records, indent=2))
    _write_lines(tmp_path / "battles.jsonl.gz", records, compress=True)
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "battles.parquet")
    frames = [
        read_battles(tmp_path / n) for n in ("battles.json", "battles.jsonl.gz", "battles.parquet")
    ]
    for frame in frames:
        assert frame.attrs["format"] == "lmarena"
        assert frame["outcome"].tolist() == [1.0, 0.5, 0.0, 0.5]
        assert frame["prompt_id"].tolist() == ["q1", "q2", "q3", "q4"]
        assert frame["judge"].tolist() == ["arena_user_1", "arena_user_0"] * 2
        assert frame["tokens_a"].tolist() == [101, 102, 103, 104]
        assert frame[["headers_a", "lists_a", "bold_a", "bold_b"]].iloc[0].tolist() == [3, 4, 4, 2]
        assert frame["record"].tolist() == [1, 2, 3, 4]
    pd.testing.assert_frame_equal(frames[0], frames[1])
    pd.testing.assert_frame_equal(frames[0], frames[2], check_dtype=False)


def test_the_140k_session_and_the_kaggle_one_hot_winners(tmp_path):
    session = [{"id": "x1", "model_a": "a", "model_b": "b", "winner": "model_b",
                "evaluation_session_id": "s1", "conv_metadata": None}]  # fmt: skip
    frame = read_battles(_write_lines(tmp_path / "s.jsonl", session))
    assert frame["judge"].tolist() == ["s1"]
    kaggle = pd.DataFrame(
        {"id": [1, 2, 3], "model_a": ["a", "b", "a"], "model_b": ["b", "a", "b"],
         "prompt": ["p"] * 3, "winner_model_a": [1, 0, 0], "winner_model_b": [0, 1, 0],
         "winner_tie": [0, 0, 1]}
    )  # fmt: skip
    kaggle.to_csv(tmp_path / "train.csv", index=False)
    assert read_battles(tmp_path / "train.csv")["winner"].tolist() == ["model_a", "model_b", "tie"]
    kaggle.loc[2, "winner_model_a"] = 1
    kaggle.to_csv(tmp_path / "train.csv", index=False)
    with pytest.raises(InputError, match="record 3: exactly one of"):
        read_battles(tmp_path / "train.csv")


def test_the_plain_csv_fixtures():
    frame = read_battles(DATA / "clustered.csv")
    assert frame.attrs["format"] == "table"
    assert list(frame.columns) == [c for c in BATTLE_COLUMNS if c in frame.columns]
    assert len(frame) == 600 and frame["prompt_id"].nunique() == 150
    assert frame["judge"].nunique() == 25 and set(frame["category"]) == {"math", "writing"}
    assert (frame["weight"] == 1).all()
    worked = read_battles(DATA / "worked_example.csv")
    assert len(worked) == 600 and worked["prompt_id"].isna().all()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model_a,model_b\nx,y\n", "missing column(s) winner"),
        ("model_a,model_b,winner\nx,y,model_a\n,y,model_a\n", "record 2: empty model_a"),
        ("model_a,model_b,winner\nx,x,model_a\n", "record 1: model 'x' battles itself"),
        ("model_a,model_b,winner\nx,y,model_a\nx,y,draw\n", "record 2: winner 'draw' is not"),
        ("model_a,model_b,winner,weight\nx,y,model_a,-1\n", "record 1: weight -1"),
        ("model_a,model_b,winner,weight\nx,y,model_a,heavy\n", "record 1: weight 'heavy'"),
        ("model_a,model_b,winner\nx\u0007y,y,model_a\n", "record 1: model_a 'x\\\\x07y' holds"),
        ("model_a,model_b,winner\n", "holds no battles"),
    ],
)
def test_plain_table_faults_name_the_file_and_record(tmp_path, text, message):
    path = tmp_path / "battles.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        read_battles(path)
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


def test_a_winner_may_name_the_model_and_voter_is_judge(tmp_path):
    path = tmp_path / "ab.csv"
    path.write_text("model_a,model_b,winner,voter,question_id\nx,y,y,v1,1\nx,y,x,v2,2\n")
    frame = read_battles(path)
    assert frame["winner"].tolist() == ["model_b", "model_a"]
    assert frame["judge"].tolist() == ["v1", "v2"]
    assert frame["prompt_id"].tolist() == ["1", "2"]


def test_a_folder_is_read_file_by_file(tmp_path):
    (tmp_path / "a.csv").write_text("model_a,model_b,winner\nx,y,model_a\n")
    (tmp_path / "b.csv").write_text("model_a,model_b,winner\ny,z,tie\n")
    frame = read_battles(tmp_path)
    assert frame["model_b"].tolist() == ["y", "z"]
    assert frame.attrs["source_path"] == str(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no battle files"):
        read_battles(tmp_path / "empty")
    with pytest.raises(InputError, match="no such file"):
        read_battles(tmp_path / "missing.csv")


def test_the_preview_counts_and_refuses_a_graph_in_pieces(tmp_path):
    preview = battles_preview(read_battles(DATA / "clustered.csv"))
    assert (preview.models, preview.battles, preview.prompts, preview.pairs) == (6, 600, 150, 15)
    assert preview.ties == 85 and preview.tie_share == pytest.approx(85 / 600)
    assert preview.per_model["battles"].sum() == 1200
    assert (
        preview.per_model[["wins", "ties", "losses"]].sum(axis=1) == preview.per_model["battles"]
    ).all()
    assert (
        preview.lines()[0]
        == "600 battles on 150 prompts between 6 models (15 of 15 pairs met); 85 ties (14.2%)"
    )
    path = tmp_path / "split.csv"
    path.write_text("model_a,model_b,winner\na,b,model_a\nc,d,tie\nb,a,model_a\n")
    with pytest.raises(
        InputError,
        match=r"split\.csv: the models fall into 2 groups .*\{'a', 'b'\} and \{'c', 'd'\}",
    ):
        battles_preview(read_battles(path))
