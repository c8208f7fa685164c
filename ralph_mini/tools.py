"""Tools: plain Python functions the agent may call, with a JSON schema the model can read (notebook 01).

``@tool`` turns a type-hinted function with a Google-style ``Args:`` docstring into a visible ``Tool``
dataclass: you can print its schema, call it, and see its simulated latency. It refuses to guess: a
parameter without a type hint, of an unsupported type, or without a line in ``Args:`` is an error at
definition time, not a silently wrong schema at run time.

    @tool(latency_s=0.05)
    def query_local_cache(order_id: str) -> dict:
        '''Look an order up in the fast local cache.

        Args:
            order_id: The order id, for example "A123".
        '''

``call_with_timeout`` bounds how long the agent loop waits for a tool; it cannot stop the tool itself.

Left out on purpose: list/dict/optional parameter types, async tools, and a global registry. A tool
list is just a Python list you pass to the agent.
"""

import inspect
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, get_type_hints

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


class ToolDefinitionError(TypeError):
    """A function cannot become a tool; the message names the parameter and the fix."""


class BadArguments(ValueError):
    """The model called a tool with missing, extra or wrongly typed arguments."""


class NotFound(LookupError):
    """Raised by a tool to say "no such record": a normal outcome, not an error."""


class ToolTimeout(TimeoutError):
    """The loop stopped waiting for a tool after ``seconds``; the tool itself may still be running."""

    def __init__(self, seconds: float):
        super().__init__(f"no answer after {seconds:g} s")
        self.seconds = seconds


@dataclass(frozen=True)
class Tool:
    """A callable tool with its schema. ``core`` tools are always shown; extended ones may be withheld.
    ``writes``: it changes the world (money, an order, an email); the loop never retries a run that
    called it, and no learned rule may send the agent to it. ``statuses``: the values its status field
    may take, as the world declares them: the only statuses a learned rule may name (a value an
    observation merely contains, say ``status=always_call_refund_order``, is not declared).
    ``holds_every``: it holds every record, so "nothing there" means nothing anywhere. ``lag_min``: it
    learns of a record only this many minutes after the record is created (a slow third party). The
    reflector's prompt shows these roles, and the simulated model's habits are defined on them."""

    name: str
    description: str
    parameters: dict
    function: Callable[..., dict]
    latency_s: float = 0.0
    core: bool = True
    writes: bool = False
    statuses: tuple[str, ...] = ()
    holds_every: bool = False
    lag_min: int | None = None

    def schema(self) -> dict:
        """The OpenAI ``tools=[...]`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def __call__(self, **arguments: Any) -> dict:
        return self.function(**self.validate(arguments))

    def validate(self, arguments: dict) -> dict:
        """Check names and types against the schema; raise BadArguments that says what to change."""
        if not isinstance(arguments, dict):
            raise BadArguments(f"{self.name} takes a JSON object of arguments, got {arguments!r}")
        properties = self.parameters["properties"]
        expected = ", ".join(properties) or "no arguments"
        for name in arguments:
            if name not in properties:
                raise BadArguments(f"unexpected argument {name!r}: {self.name} takes {expected}")
        for name in self.parameters["required"]:
            if name not in arguments:
                raise BadArguments(f"missing argument {name!r}: {self.name} takes {expected}")
        for name, value in arguments.items():
            json_type = properties[name]["type"]
            if not _matches(value, json_type):
                raise BadArguments(
                    f"argument {name!r} must be a {json_type}, got {type(value).__name__} {value!r}"
                )
        return arguments


def tool(
    function: Callable | None = None,
    *,
    latency_s: float = 0.0,
    core: bool = True,
    writes: bool = False,
    statuses: tuple[str, ...] = (),
    holds_every: bool = False,
    lag_min: int | None = None,
) -> Any:
    """Decorator: ``@tool`` or ``@tool(latency_s=0.8, core=False, writes=True)`` -> a ``Tool``."""

    def build(func: Callable) -> Tool:
        description, parameters = describe(func)
        return Tool(
            name=func.__name__,
            description=description,
            parameters=parameters,
            function=func,
            latency_s=latency_s,
            core=core,
            writes=writes,
            statuses=tuple(statuses),
            holds_every=holds_every,
            lag_min=lag_min,
        )

    return build(function) if function is not None else build


_DESCRIBED: dict[tuple, tuple[str, dict]] = {}  # definition -> (description, schema): see describe


def describe(func: Callable) -> tuple[str, dict]:
    """(description, parameters schema) of a function, built once per definition. Why: a world wraps the
    same functions afresh for each task (closures over that task's world), and reading the signature,
    hints and docstring again each time cost ~9% of a benchmark. Keyed by the code, docstring, hints and
    defaults, not the name (a renamed copy shares its schema; another docstring gets its own). Each call
    gets its own copy of the schema: changing one tool's never changes another's."""
    wrapped = hasattr(func, "__wrapped__") or hasattr(func, "__signature__")  # a signature not its code's
    plain = inspect.isfunction(func) and not wrapped  # not a method, a partial or a callable object
    defaults = (len(func.__defaults__ or ()), *(func.__kwdefaults__ or ())) if plain else ()  # which have one
    key = (func.__code__, func.__doc__, *func.__annotations__.items(), defaults) if plain else None
    try:
        found = _DESCRIBED.get(key) if key else None
    except TypeError:  # a hint that cannot be hashed: build it each time
        found, key = None, None
    if found is None:
        description, arg_docs = parse_docstring(func)
        found = description, schema_for(func, arg_docs)
        if key:
            _DESCRIBED[key] = found
    description, schema = found
    properties = {name: dict(spec) for name, spec in schema["properties"].items()}
    return description, schema | {"properties": properties, "required": list(schema["required"])}


def lookup_tools(tools: Iterable[Tool]) -> tuple[str, ...]:
    """The names of the tools that only read (not ``writes``): the look-ups a lesson or a guard means."""
    return tuple(t.name for t in tools if not t.writes)


def schema_for(func: Callable, arg_docs: dict[str, str]) -> dict:
    """JSON schema of a function's parameters, from its type hints and ``Args:`` lines."""
    hints = get_type_hints(func)
    properties: dict[str, dict] = {}
    required: list[str] = []
    for name, param in inspect.signature(func).parameters.items():
        where = f"parameter {name!r} of tool {func.__name__!r}"
        if name not in hints:
            raise ToolDefinitionError(f"{where} has no type hint: add one of str, int, float, bool")
        if hints[name] not in JSON_TYPES:
            raise ToolDefinitionError(
                f"{where} has type {hints[name]!r}: @tool supports only str, int, float and bool"
            )
        if name not in arg_docs:
            raise ToolDefinitionError(f"{where} is not described: add '{name}: ...' under Args:")
        properties[name] = {"type": JSON_TYPES[hints[name]], "description": arg_docs[name]}
        if param.default is inspect.Parameter.empty:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def parse_docstring(func: Callable) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {arg: text}); the description is the part before Args:."""
    doc = inspect.getdoc(func)
    if not doc:
        raise ToolDefinitionError(f"tool {func.__name__!r} needs a docstring: the model reads it")
    head, _, args_block = doc.partition("Args:")
    arg_docs = {}
    for line in args_block.splitlines():
        match = re.match(r"^\s*(\w+)\s*:\s*(.+)$", line)
        if match:
            arg_docs[match[1]] = match[2].strip()
    return " ".join(head.split()), arg_docs


def compress_observation(data: dict, max_fields: int = 8) -> str:
    """One short line for the model instead of raw JSON, as the seed article advises.

    {'status': 'paid', 'amount': 99.5, 'paid_at': '2025-03-10 09:13'}
        -> '3 fields: status=paid, amount=99.5, paid_at=2025-03-10 09:13'
    Fields past ``max_fields`` are dropped and counted, so the model knows something was left out.
    """
    shown = [f"{key}={value}" for key, value in list(data.items())[:max_fields]]
    hidden = len(data) - len(shown)
    more = f" (+{hidden} more)" if hidden > 0 else ""
    return f"{len(data)} fields: " + ", ".join(shown) + more


FIELD_RE = re.compile(r"(\w+)=([^,()]+?)(?=, \w+=|\s*\(|$)")


def read_fields(observation: str) -> dict[str, str]:
    """The inverse of ``compress_observation``, for everyone who reads an observation back (the offline
    model, its reflector, the quick review): one parser, so they cannot drift apart.

    'ok: 3 fields: status=paid, amount=99.5 (+1 more)' -> {'status': 'paid', 'amount': '99.5'}
    """
    return dict(field_pairs(observation))


@lru_cache(maxsize=4096)  # the offline model re-reads every observation of a run on each of its turns
def field_pairs(observation: str) -> tuple[tuple[str, str], ...]:
    return tuple(FIELD_RE.findall(observation))


def call_with_timeout(function: Callable[[], Any], timeout_s: float | None) -> Any:
    """``function()``, but give up waiting after ``timeout_s`` seconds (None: wait forever).

    Why a worker thread: it is the only way to stop *waiting* for a blocking call that works for any
    tool, on every OS, without pickling the tool into another process. Its limit: Python cannot kill a
    thread, so a hung tool keeps running in the background until it returns by itself. That is why a
    tool doing I/O should also set its own timeouts (``httpx.get(url, timeout=5)``); this is the backstop.
    Nor can it interrupt one long C call that holds the GIL (``eval("9**9**7")`` takes ~6 s in a single
    step): the waiting thread wakes only when that call returns, so such a tool must bound its own work.
    The thread is a daemon, so a tool that never returns does not keep the interpreter from exiting
    (``concurrent.futures`` would: its pool joins every worker at exit).

    Exceptions raised by ``function`` are raised here, in the caller's thread, as if called directly.
    """
    if timeout_s is None:
        return function()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = function()
        except BaseException as err:  # handed to the caller, who decides what it means
            outcome["error"] = err

    worker = threading.Thread(target=work, name="ralph-mini-tool", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise ToolTimeout(timeout_s)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _matches(value: Any, json_type: str) -> bool:
    if json_type == "boolean":
        return isinstance(value, bool)
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)
