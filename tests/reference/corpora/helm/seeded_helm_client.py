"""A deterministic multiple-choice "model" for crfm-helm, registered through prod_env.

HELM builds it from ``prod_env/model_deployments.yaml`` (``client_spec.class_name:
seeded_helm_client.SeededMCQClient``, ``args: {theta, data_dir}``) and injects
``cache_config`` and ``model_name``. For MMLU's joint multiple-choice prompt it finds the
last question of the prompt in the CSVs under ``data_dir`` and answers the gold letter when
``unit(model, prompt, "knows") < theta``; otherwise a hash-chosen letter, or (1 time in 8)
the word ``The``, which maps to no option and scores 0. The prompt differs per train trial
and per perturbation, so each trial is a new draw. Anything else (HELM's own scenarios) gets
the reversed prompt words, like HELM's SimpleClient.
"""

import csv
import hashlib
from pathlib import Path

from helm.clients.client import CachingClient
from helm.common.request import GeneratedOutput, Request, RequestResult, Token, wrap_request_time


def unit(*parts) -> float:
    """The first 8 bytes of SHA-256 of the parts, as a number in [0, 1)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class SeededMCQClient(CachingClient):
    def __init__(self, cache_config, model_name: str, theta: float, data_dir: str):
        super().__init__(cache_config=cache_config)
        self.model_name = model_name
        self.theta = float(theta)
        self.gold = {}
        for path in sorted(Path(data_dir).rglob("*.csv")):
            with open(path, newline="") as fh:
                for row in csv.reader(fh):
                    self.gold[row[0].strip().lower()] = row[-1]

    def _answer(self, prompt: str) -> str:
        blocks = [b for b in prompt.strip().split("\n\n") if b.strip()]
        first = blocks[-1].split("\n")[0].strip().lower() if blocks else ""
        question = first.removeprefix("question:").strip()
        if question not in self.gold:
            return " ".join(reversed(prompt.split()[-3:]))
        if unit(self.model_name, prompt, "knows") < self.theta:
            return self.gold[question]
        if unit(self.model_name, prompt, "junk") < 0.125:
            return "The"
        return "ABCD"[int(unit(self.model_name, prompt, "guess") * 4)]

    def make_request(self, request: Request) -> RequestResult:
        raw = {
            "engine": request.model_engine,
            "prompt": request.prompt,
            "n": request.num_completions,
        }

        def do_it():
            text = self._answer(request.prompt)
            return {"completions": [text] * request.num_completions}

        response, cached = self.cache.get(
            CachingClient.make_cache_key(raw, request), wrap_request_time(do_it)
        )
        completions = [
            GeneratedOutput(text=t, logprob=0.0, tokens=[Token(text=t, logprob=0.0)])
            for t in response["completions"]
        ]
        return RequestResult(
            success=True,
            cached=cached,
            request_time=response["request_time"],
            request_datetime=response.get("request_datetime"),
            completions=completions,
            embedding=[],
        )
