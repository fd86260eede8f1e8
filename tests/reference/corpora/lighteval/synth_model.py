"""A seeded fake model for lighteval 0.13's ``lighteval custom`` backend (evalbars test data).

``lighteval custom <model_name> synth_model.py <tasks>`` loads the one LightevalModel subclass
here. It "knows" a question when ``unit(model, seed, query) < skill`` (skill by model name;
seed from ``$SYNTH_SEED``, so two runs of one model name differ): a known multiple-choice
question gets the gold choice the highest log-probability; an unknown one random ones. For
generation it returns ``doc.num_samples`` texts, each right with probability ``skill`` (drawn
per sample), else a wrong number. ``$SYNTH_LIGHTEVAL_CACHE`` replaces lighteval's sample cache
folder (the CLI cannot set it), so the generator can wipe it.
"""

import hashlib
import os

from lighteval.models.abstract_model import LightevalModel
from lighteval.models.model_output import ModelResponse
from lighteval.utils.cache_management import SampleCache

SKILL = {"synth/model-a": 0.8, "synth/model-b": 0.6, "synth/model-c": 0.4}


def unit(*parts) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class SynthModel(LightevalModel):
    def __init__(self, config):
        cache = os.environ.get("SYNTH_LIGHTEVAL_CACHE")
        self.config = config.model_copy(update={"cache_dir": cache}) if cache else config
        self.name = config.model_name
        self.skill = SKILL[self.name]
        self.seed = os.environ.get("SYNTH_SEED", "1")
        self._cache = SampleCache(self.config)

    @property
    def tokenizer(self):
        return None

    @property
    def add_special_tokens(self):
        return False

    @property
    def max_length(self) -> int:
        return 4096

    def greedy_until(self, docs):
        out = []
        for doc in docs:
            gold = doc.choices[
                doc.gold_index if isinstance(doc.gold_index, int) else doc.gold_index[0]
            ]
            texts = []
            for k in range(max(1, doc.num_samples or 1)):
                right = unit(self.name, self.seed, doc.query, k, "gen") < self.skill
                texts.append(
                    gold if right else str(int(unit(self.name, doc.query, k, "w") * 90) + 100)
                )
            out.append(ModelResponse(text=texts))
        return out

    def loglikelihood(self, docs):
        out = []
        for doc in docs:
            knows = unit(self.name, self.seed, doc.query, "knows") < self.skill
            gold = doc.gold_index if isinstance(doc.gold_index, int) else doc.gold_index[0]
            logprobs = [-(0.5 + 4 * unit(self.name, self.seed, doc.query, c)) for c in doc.choices]
            if knows:
                logprobs[gold] = -0.01
            out.append(
                ModelResponse(logprobs=logprobs, argmax_logits_eq_gold=[False] * len(doc.choices))
            )
        return out

    def loglikelihood_rolling(self, docs):
        return [ModelResponse(logprobs=[-1.0]) for _ in docs]
