"""Arena-Hard-Auto judgment files made by Arena-Hard-Auto's own scripts, with a stand-in judge.

Runs, in a throwaway venv (never the project's), Arena-Hard-Auto's ``gen_answer.py`` for five
stand-in models and its ``gen_judgment.py`` for a stand-in judge, both against a deterministic
OpenAI-compatible server this script starts on 127.0.0.1. Writes, gzip-compressed, the answer
files (``model_answer/<model>.jsonl.gz``) and the judgment files
(``model_judgment/stand-in-judge/<model>.jsonl.gz``) as the scripts wrote them. See
``tests/reference/battles/README.md`` for what the stand-ins do and how to rerun this.

Usage (from the repository root)::

    python3 -m venv /tmp/ah && /tmp/ah/bin/pip install openai pyyaml tqdm pandas shortuuid \\
        requests boto3
    /tmp/ah/bin/python tests/reference/battles/make_arena_hard_judgments.py \\
        --repo <git dir of lmarena/arena-hard-auto> --out tests/data/battles/arena_hard
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.server
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: What is taken from the repository: the two scripts and their utilities.
CODE = ("gen_answer.py", "gen_judgment.py", "utils", "config")
BENCH = "stand-in-bench"
JUDGE = "stand-in-judge"
BASELINE = "baseline-model"
#: Stand-in models: strength (log-odds of the judge's preference) and answer style.
MODELS = {
    BASELINE: (0.0, "plain"),
    "model-alpha": (0.7, "rich"),
    "model-beta": (0.35, "lists"),
    "model-gamma": (0.0, "plain"),
    "model-delta": (-0.45, "terse"),
}
CATEGORIES = ("coding", "writing")
PROMPTS = 100
#: The judge's verdict from d = quality_A - quality_B + position bias + noise.
POSITION_BIAS = 0.15
PROMPT_EFFECT_SD = 0.9
JUDGE_NOISE_SD = 0.45
LENGTH_PULL = 0.5
TIE_BAND, STRONG_BAND = 0.35, 1.6
NO_VERDICT_SHARE = 0.01
TOPICS = (
    "reverse a linked list",
    "parse a CSV file with quoted fields",
    "explain the birthday paradox",
    "write a haiku about autumn rain",
    "summarise the causes of inflation",
    "describe a binary search tree",
    "draft a polite reminder email",
    "compare TCP and UDP",
    "write a limerick about a cat",
    "explain gradient descent",
)


def normal(*key) -> float:
    """A standard normal value fixed by the key (Box-Muller on two hash-derived uniforms)."""
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    u1 = (int.from_bytes(digest[:8], "big") + 0.5) / 2**64
    u2 = (int.from_bytes(digest[8:16], "big") + 0.5) / 2**64
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def uniform(*key) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def answer_text(model: str, prompt: str) -> str:
    """A stand-in answer: its quality on a last line; its length and markdown vary by prompt,
    around the model's style."""
    strength, style = MODELS[model]
    quality = strength + PROMPT_EFFECT_SD * normal("prompt-model", prompt, model)
    topic = prompt.split(": ", 1)[-1]
    most = {"rich": 6, "lists": 5, "plain": 4, "terse": 2}[style]
    points = [
        f"Step {i + 1} of the answer about {topic}."
        for i in range(1 + int(most * uniform("points", prompt, model)))
    ]
    header = uniform("header", prompt, model) < {"rich": 0.8, "lists": 0.3}.get(style, 0.05)
    bold = uniform("bold", prompt, model) < {"rich": 0.9, "lists": 0.4}.get(style, 0.1)
    strong = "**" if bold else ""
    if style in ("rich", "lists") and uniform("list", prompt, model) < 0.8:
        body = "\n".join(f"- {strong}Point {i + 1}{strong}: {p}" for i, p in enumerate(points))
    else:
        body = " ".join(points)
    body = f"Here is a {strong}careful{strong} answer to: {topic}.\n\n{body}"
    if header:
        body = f"## Answer\n\n{body}"
    return f"{body}\n\nStand-in quality: {quality:.4f}"


def verdict_text(user_prompt: str) -> str:
    """The stand-in judge: reads both answers' qualities and lengths from the judge prompt."""
    answers = re.findall(
        r"<\|The Start of Assistant [AB]'s Answer\|>\n(.*?)\n<\|The End of", user_prompt, re.S
    )
    qa, qb = (float(re.search(r"Stand-in quality: (\S+)", a).group(1)) for a in answers)
    la, lb = (len(a.split()) for a in answers)
    if uniform("no verdict", user_prompt) < NO_VERDICT_SHARE:
        return "I cannot decide between these answers."
    d = (
        qa
        - qb
        + POSITION_BIAS
        + LENGTH_PULL * (la - lb) / (la + lb + 1)
        + JUDGE_NOISE_SD * normal("judge", user_prompt)
    )
    if d > STRONG_BAND:
        label = "A>>B"
    elif d > TIE_BAND:
        label = "A>B"
    elif d >= -TIE_BAND:
        label = "A=B"
    elif d >= -STRONG_BAND:
        label = "B>A"
    else:
        label = "B>>A"
    return f"Both answers address the prompt; weighing them, my final verdict is [[{label}]]."


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the http.server protocol
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model, messages = request["model"], request["messages"]
        if model == JUDGE:
            content = verdict_text(messages[-1]["content"])
        else:
            content = answer_text(model, messages[-1]["content"])
        body = json.dumps(
            {
                "id": "chatcmpl-stand-in",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


TIKTOKEN_STAND_IN = '''"""Stand-in for tiktoken: its vocabulary files cannot be fetched offline. Counts words."""


class _Words:
    def encode(self, text, disallowed_special=()):
        return text.split()


def encoding_for_model(name):
    return _Words()
'''

JUDGMENT_RUNNER = '''"""Registers the stand-in categories (baseline-model as their baseline), then runs
gen_judgment.py unchanged."""
import runpy
import sys

from utils import judge_utils

for category in {categories!r}:
    judge_utils.JUDGE_SETTINGS[category] = {{
        "baseline": {baseline!r},
        "system_prompt": judge_utils.OG_ARENA_HARD_PROMPT,
    }}
sys.argv = ["gen_judgment.py", "--setting-file", "judge_config.yaml",
            "--endpoint-file", "api_config.yaml"]
runpy.run_path("gen_judgment.py", run_name="__main__")
'''


def write_inputs(work: Path, port: int) -> None:
    (work / "stand_in" / "tiktoken").mkdir(parents=True)
    (work / "stand_in" / "tiktoken" / "__init__.py").write_text(TIKTOKEN_STAND_IN)
    bench = work / "data" / BENCH
    bench.mkdir(parents=True)
    with open(bench / "question.jsonl", "w") as fh:
        for i in range(PROMPTS):
            category = CATEGORIES[i % 2]
            prompt = f"Prompt {i + 1} ({category}): {TOPICS[i % len(TOPICS)]}"
            fh.write(json.dumps({"uid": f"p{i + 1:03d}", "category": category, "prompt": prompt}))
            fh.write("\n")
    endpoint = [{"api_base": f"http://127.0.0.1:{port}/v1", "api_key": "stand-in"}]
    api = {
        name: {
            "model": name,
            "endpoints": endpoint,
            "api_type": "openai",
            "parallel": 1,
            "max_tokens": 512,
            "temperature": 0.0,
        }
        for name in [*MODELS, JUDGE]
    }
    (work / "api_config.yaml").write_text(json.dumps(api, indent=1))
    (work / "answer_config.yaml").write_text(
        json.dumps({"bench_name": BENCH, "model_list": list(MODELS)})
    )
    (work / "judge_config.yaml").write_text(
        json.dumps(
            {
                "judge_model": JUDGE,
                "temperature": 0.0,
                "max_tokens": 256,
                "bench_name": BENCH,
                "reference": None,
                "regex_patterns": [r"\[\[([AB<>=]+)\]\]", r"\[([AB<>=]+)\]"],
                "prompt_template": (
                    "<|User Prompt|>\n{QUESTION}\n\n<|The Start of Assistant A's Answer|>\n"
                    "{ANSWER_A}\n<|The End of Assistant A's Answer|>\n\n<|The Start of "
                    "Assistant B's Answer|>\n{ANSWER_B}\n<|The End of Assistant B's Answer|>"
                ),
                "model_list": [m for m in MODELS if m != BASELINE],
            }
        )
    )
    (work / "run_judgment.py").write_text(
        JUDGMENT_RUNNER.format(categories=CATEGORIES, baseline=BASELINE)
    )


def gzip_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(source.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True, help="git dir of lmarena/arena-hard-auto")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out).resolve()
    commit = subprocess.run(
        ["git", "--git-dir", args.repo, "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        archive = subprocess.run(
            # the scripts and their utilities (the snapshot may lack the large data files)
            ["git", "--git-dir", args.repo, "archive", "HEAD", *CODE],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        write_inputs(work, server.server_address[1])
        env = {"PYTHONPATH": str(work / "stand_in"), "PATH": "/usr/bin:/bin", "HOME": folder}
        for command in (
            [sys.executable, "gen_answer.py", "--config-file", "answer_config.yaml",
             "--endpoint-file", "api_config.yaml"],
            [sys.executable, "run_judgment.py"],
        ):  # fmt: skip
            subprocess.run(command, cwd=work, env=env, check=True, capture_output=True)
        if out.exists():
            shutil.rmtree(out)
        for kind in ("model_answer", f"model_judgment/{JUDGE}"):
            for file in sorted((work / "data" / BENCH / kind).glob("*.jsonl")):
                gzip_copy(file, out / kind / f"{file.name}.gz")
    server.shutdown()
    (out / "PROVENANCE.json").write_text(
        json.dumps(
            {
                "arena_hard_auto_commit": commit,
                "python": sys.version.split()[0],
                "prompts": PROMPTS,
                "models": {m: {"strength": s, "style": st} for m, (s, st) in MODELS.items()},
                "judge": {
                    "position_bias": POSITION_BIAS,
                    "prompt_effect_sd": PROMPT_EFFECT_SD,
                    "judge_noise_sd": JUDGE_NOISE_SD,
                    "length_pull": LENGTH_PULL,
                    "tie_band": TIE_BAND,
                    "strong_band": STRONG_BAND,
                    "no_verdict_share": NO_VERDICT_SHARE,
                },
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out} from arena-hard-auto {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
