"""The bundled tiny model with its measured best settings, replayed or live (notebook 08).

``local_actor`` and ``local_reflector`` are the kit's one adapter, ``OpenAIModel``, with the settings
measured best for the base Gemma 3 270M (``benchmarks/local_llm.py``): temperature 0, capped replies,
and for acting a server-enforced JSON schema. ``local_session`` gives one experiment its models:
replayed from committed cassettes (no llama.cpp needed), or live on a fresh server and recorded.

Left out on purpose: tuning per experiment (one setting for all, as a student would use it).
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ralph_mini.cassette import CassetteError, RecordingModel, ReplayModel
from ralph_mini.json_tools import JsonToolsModel, SystemInUserModel, response_format
from ralph_mini.local import DEFAULT_PORT, LOCAL_MODEL_NAME, serve_local
from ralph_mini.model import ChatModel, OpenAIModel

ACT_MAX_TOKENS = 80  # a tool call is ~20 tokens, a final answer ~50; a base model may never stop
REFLECT_MAX_TOKENS = 200  # the reflector's four-section template, filled in, is ~100-150 tokens
LOCAL_TIMEOUT_S = 300.0  # a reply on 2 busy cores can take a minute; slow is not broken here


def local_actor(
    base_url: str, tools: list[dict], answer_schema: dict | None = None, *, max_tokens: int = ACT_MAX_TOKENS
) -> OpenAIModel:
    """The acting model with the best measured setting: temperature 0, capped replies, and the server
    held to ``json_tools.json_action_schema`` (with the world's ``answer_schema``): for ``tools``, or
    for the tools of each turn when it is given them (``JsonToolsModel(..., pass_tools=True)``). Wrap it
    in ``JsonToolsModel(..., example)`` to act."""

    def held_to(offered: list[dict]) -> dict:
        return {"response_format": response_format(offered, answer_schema)}

    return OpenAIModel(LOCAL_MODEL_NAME, base_url=base_url, api_key="not-needed", max_tokens=max_tokens,
                       timeout_s=LOCAL_TIMEOUT_S, max_retries=0, extra_body=held_to(tools),
                       tools_in_body=held_to)  # fmt: skip


def local_reflector(base_url: str, *, max_tokens: int = REFLECT_MAX_TOKENS) -> OpenAIModel:
    """The same server as a plain text model, for the reflector's template (no schema). Wrap it in
    ``SystemInUserModel``: the gemma chat format would drop the template, which is a system prompt."""
    return OpenAIModel(LOCAL_MODEL_NAME, base_url=base_url, api_key="not-needed", max_tokens=max_tokens,
                       timeout_s=LOCAL_TIMEOUT_S, max_retries=0)  # fmt: skip


@contextmanager
def local_session(
    name: str,
    tools: list[dict],
    *,
    live: bool,
    cassettes: str | Path,
    example: Sequence[dict] = (),
    answer_schema: dict | None = None,
    actor: bool = True,
    reflector: bool = False,
    port: int = DEFAULT_PORT + 1,
) -> Iterator[tuple[ChatModel | None, ChatModel | None]]:
    """``(actor, reflector)`` for one experiment on the bundled model: replayed, or live and recorded.

    Replay (``live=False``, needs no llama.cpp): ``ReplayModel`` stands in for the server, from
    ``<cassettes>/<name>_act.jsonl`` and ``<name>_reflect.jsonl``; when the block ends, every recorded
    reply must have been used, or the run went another way than the recording did.
    Live: a *fresh* server for every experiment (its prompt cache starts empty, so a rerun repeats the
    recording; a warm cache can flip a close choice of a tool), recorded into the same files.
    The actor is ``JsonToolsModel(<server>, example, pass_tools=True)`` (a world's worked example; each
    reply held to the schema of its turn's tools, its final answer to ``answer_schema``), the reflector
    ``SystemInUserModel(<server>)``;
    a role not asked for is None (and an asked-for reflector the run never calls records an empty file).
    """
    roles = [role for role, wanted in (("act", actor), ("reflect", reflector)) if wanted]
    paths = {role: Path(cassettes) / f"{name}_{role}.jsonl" for role in roles}
    if live:
        for path in paths.values():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")  # a fresh recording: RecordingModel appends
        server = serve_local(port=port)
        inner = {"act": local_actor(server.base_url, tools, answer_schema),
                 "reflect": local_reflector(server.base_url)}  # fmt: skip
        served = {role: RecordingModel(inner[role], path) for role, path in paths.items()}
    else:
        server = None
        served = {role: ReplayModel(path) for role, path in paths.items()}
    try:
        yield (JsonToolsModel(served["act"], list(example), pass_tools=True) if actor else None,
               SystemInUserModel(served["reflect"]) if reflector else None)  # fmt: skip
    finally:
        if server is not None:
            server.stop()
    unused = [] if live else [f"{m.path.name}: {m.remaining}" for m in served.values() if m.remaining]
    if unused:
        raise CassetteError(f"the replay stopped short of the recording ({', '.join(unused)} replies "
                            "unused): the run changed since recording; record it again")  # fmt: skip
