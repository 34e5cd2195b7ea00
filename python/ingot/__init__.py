"""ingot for Python: serve compiled LLM artifacts, run compiled ONNX graphs,
and (when built with the compiler) compile models.

    import ingot
    engine = ingot.Engine("model.ingot")
    out = engine.generate(["The capital of France is"],
                          ingot.SamplingParams(temperature=0, max_tokens=8))
    print(out[0].outputs[0].text)
    for piece in engine.stream("Once upon a time", ingot.SamplingParams(max_tokens=16)):
        print(piece.text, end="", flush=True)

The engine runs on its own thread; generate(), stream() and Artifact.run()
release the GIL while they wait, so other Python threads keep running.
"""
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Union

from . import _ingot

Error = _ingot.Error

__all__ = ["Artifact", "CompletionOutput", "Engine", "Error", "RequestOutput",
           "SamplingParams", "StreamOutput", "compile"]

Prompt = Union[str, Sequence[int]]


@dataclass
class SamplingParams:
    """How one request samples and when it stops (vLLM's names). Penalties:
    repetition over prompt and output (Hugging Face), presence and frequency
    over the output (OpenAI). logprobs=k reports each token's
    log-probability and the k most likely alternatives."""
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    seed: int = 0
    max_tokens: int = 16
    stop: Optional[List[str]] = None
    stop_token_ids: Optional[List[int]] = None
    ignore_eos: bool = False
    logprobs: Optional[int] = None

    def _as_dict(self):
        d = dict(self.__dict__)
        if isinstance(d["stop"], str):
            d["stop"] = [d["stop"]]
        d["logprobs"] = -1 if d["logprobs"] is None else d["logprobs"]
        return d


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: List[int]
    finish_reason: str  # "stop", "length" or "cancelled"
    logprobs: Optional[List[Dict[int, float]]] = None  # per token: id -> logprob


@dataclass
class RequestOutput:
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput]
    ttft_ms: float = 0.0
    e2e_ms: float = 0.0
    finished: bool = True


@dataclass
class StreamOutput:
    """One event of Engine.stream: a token (token_id >= 0) and the text it
    completed (possibly "" while a character or stop string is pending);
    the last has finished=True and the finish reason."""
    token_id: int
    text: str
    finished: bool
    finish_reason: Optional[str]
    time_ms: float
    logprob: Optional[float] = None
    top_logprobs: Optional[Dict[int, float]] = None


def _check_device(device):
    if device not in ("auto", "cpu"):
        raise Error(f"device '{device}': this build of ingot runs on the CPU "
                    "only (the CUDA and HIP backends are not built yet)")


class Engine:
    """Continuous-batching engine over one compiled LLM artifact.

    engine_options: threads, kv_blocks | kv_cache_mb, max_tokens_per_step,
    max_seqs, prefix_caching, kv_cache_dtype ("auto", "float32", "bfloat16",
    "int8", "fp8"; see `ingot generate --help`), weights (the model
    directory of an artifact compiled with weights="external")."""

    def __init__(self, path: str, device: str = "auto", **engine_options):
        _check_device(device)
        self._engine = _ingot._Engine(str(path), engine_options)

    @property
    def context_length(self) -> int:
        return self._engine.context_length

    def _ids(self, prompt: Prompt) -> List[int]:
        if isinstance(prompt, str):
            return self._engine.encode(prompt, True)
        return [int(t) for t in prompt]

    def generate(self, prompts: Union[Prompt, Sequence[Prompt]],
                 sampling_params: Union[SamplingParams,
                                        Sequence[SamplingParams], None] = None
                 ) -> List[RequestOutput]:
        """Runs every prompt together (continuous batching) and returns one
        RequestOutput per prompt, in order. A prompt is a string (encoded
        with the artifact's tokenizer) or a list of token ids."""
        if isinstance(prompts, str) or (
                prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        prompts = list(prompts)
        params = sampling_params or SamplingParams()
        if isinstance(params, SamplingParams):
            params = [params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(params)} "
                             "sampling params")
        ids = [self._ids(p) for p in prompts]
        events = self._engine.generate(ids, [p._as_dict() for p in params])
        return [_request_output(p, i, ev)
                for p, i, ev in zip(prompts, ids, events)]

    def chat(self, messages: List[Dict[str, str]],
             sampling_params: Optional[SamplingParams] = None
             ) -> RequestOutput:
        """One reply to `messages` ({"role", "content"}), formatted with
        the artifact's chat template."""
        text = self._engine.chat_prompt(
            [(m["role"], m["content"]) for m in messages])
        ids = self._engine.encode(text, False)  # the template writes BOS
        params = (sampling_params or SamplingParams())._as_dict()
        return _request_output(text, ids, self._engine.generate([ids],
                                                                [params])[0])

    def stream(self, prompt: Prompt,
               sampling_params: Optional[SamplingParams] = None
               ) -> Iterator[StreamOutput]:
        """Yields each token as it is produced. Dropping the iterator early
        cancels the request and frees its KV blocks."""
        params = (sampling_params or SamplingParams())._as_dict()
        for e in self._engine.stream(self._ids(prompt), params):
            yield StreamOutput(e["token_id"], e["text"], e["finished"],
                               e["finish_reason"], e["time_ms"],
                               e.get("logprob"), e.get("top_logprobs"))

    def encode(self, text: str, add_bos: bool = True) -> List[int]:
        return self._engine.encode(text, add_bos)

    def decode(self, token_ids: Sequence[int]) -> str:
        return self._engine.decode(list(token_ids))

    def stats(self) -> Dict[str, float]:
        return self._engine.stats()


def _request_output(prompt, ids, events) -> RequestOutput:
    tokens = [e for e in events if e["token_id"] >= 0]
    last = events[-1]
    logprobs = None
    if tokens and "logprob" in tokens[0]:
        logprobs = [{e["token_id"]: e["logprob"], **e["top_logprobs"]}
                    for e in tokens]
    out = CompletionOutput(0, "".join(e["text"] for e in events),
                           [e["token_id"] for e in tokens],
                           last["finish_reason"], logprobs)
    return RequestOutput(prompt if isinstance(prompt, str) else None, ids,
                         [out], tokens[0]["time_ms"] if tokens else 0.0,
                         last["time_ms"])


class Artifact:
    """An artifact compiled from an ONNX graph: run({name: ndarray}) returns
    {name: ndarray}. Dtypes must match the model's inputs exactly."""

    def __init__(self, path: str, threads: int = 0):
        self._artifact = _ingot._Artifact(str(path), threads)

    @property
    def input_names(self) -> List[str]:
        return self._artifact.input_names

    @property
    def output_names(self) -> List[str]:
        return self._artifact.output_names

    def run(self, inputs: Dict[str, "numpy.ndarray"]) -> Dict[str, "numpy.ndarray"]:
        return self._artifact.run(dict(inputs))


def compile(source: str, output: str, target: Union[str, List[str]] = "cpu",
            **flags) -> None:
    """Compiles an ONNX model or a Hugging Face directory to an artifact,
    in-process. Flags are the CLI's as keywords: quant="int8",
    group_size=64, quant_scheme="sym", quant_exclude=["lm_head"],
    quant_lm_head="int8", quant_embed="same", max_context=2048, block_size=16,
    max_tokens_per_step=256, max_seqs=64, kv_layout=..., fusion=True,
    shapes={"input": [1, 3, 224, 224]}, weights="external" (no weight
    bytes in the artifact: pass Engine(..., weights=DIR) to run it)."""
    if not _ingot._has_compiler:
        raise Error("this ingot module was built without the compiler "
                    "(INGOT_ENABLE_COMPILER=OFF); build it with LLVM/MLIR 22 "
                    "to compile, or use the `ingot compile` CLI")
    _ingot._compile(str(source), str(output), target, **flags)
