"""A seeded multiple-choice "model" for crfm-helm that reports how many tokens it wrote.

HELM counts a request's prompt tokens itself, with the deployment's tokenizer
(``num_prompt_tokens``; ``simple/tokenizer1`` gives one token per character), and its output
tokens as the length of each completion's ``tokens`` list (``num_completion_tokens``, and
``num_output_tokens`` the same without an echoed prompt). So this client answers as
``SeededMCQClient`` of the ``helm`` fixture does (the same text, the gold letter with
probability ``theta``), and returns a completion whose ``tokens`` are the model's hidden
reasoning followed by the answer: :func:`reasoning_tokens` of them, plus one. The text stays the
answer alone, as a reasoning model's API returns it, so HELM's ``exact_match`` scores the letter.
"""

from helm.clients.client import CachingClient
from helm.common.request import GeneratedOutput, Request, RequestResult, Token, wrap_request_time
from seeded_helm_client import SeededMCQClient, unit

#: Hidden reasoning of each stand-in: (least, span) tokens, drawn per prompt.
REASONING = {"synth/terse": (0, 0), "synth/verbose": (20, 80)}


def reasoning_tokens(model: str, prompt: str) -> int:
    """Tokens the stand-in "thinks" before answering this prompt (0 for a terse model)."""
    least, span = REASONING[model]
    return least + int(span * unit(model, prompt, "think"))


class UsageMCQClient(SeededMCQClient):
    def make_request(self, request: Request) -> RequestResult:
        raw = {
            "engine": request.model_engine,
            "prompt": request.prompt,
            "n": request.num_completions,
        }

        def do_it():
            text = self._answer(request.prompt)
            thought = reasoning_tokens(self.model_name, request.prompt)
            return {"completions": [text] * request.num_completions, "reasoning": thought}

        response, cached = self.cache.get(
            CachingClient.make_cache_key(raw, request), wrap_request_time(do_it)
        )
        hidden = [Token(text="", logprob=0.0)] * response["reasoning"]
        completions = [
            GeneratedOutput(text=t, logprob=0.0, tokens=[*hidden, Token(text=t, logprob=0.0)])
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
