"""ralph_mini: from a bare ReAct agent to a Ralph Loop that learns from its own runs.

Modules, in the order the notebooks teach them: model, tokens, rules, tools, world, offline_habits,
offline, backends, hardening, react, measure (01), log (02), lesson_guards, reflect (03), clock, memory,
memory_file (04), embed, retrieval (05), learn, loop and bench (06), outer (10); widgets and exercise
are packages of their own. The worlds the agent acts in are packages of their own, under ``worlds/``
(``from ralph_mini.worlds import orders``): nothing here imports one.

``from ralph_mini import run_react`` works for every name below, but each is imported from its module
on first use (PEP 562): importing this package runs this file, and importing everything here would
make notebook 01 load the Ralph Loop, memory and faiss it does not use.
"""

from importlib import import_module

# Each public name and the module that defines it.
HOMES = {
    **dict.fromkeys(["model_from_env"], "backends"),
    **dict.fromkeys(["run_agent"], "bench"),
    **dict.fromkeys(["FakeClock"], "clock"),
    **dict.fromkeys(["Embedder", "HashingEmbedder"], "embed"),
    **dict.fromkeys(["append_run", "load_log", "log_run"], "log"),
    **dict.fromkeys(["LoopConfig", "TaskResult", "run_loop", "run_task"], "loop"),
    **dict.fromkeys(["run_suite", "summarize"], "measure"),
    **dict.fromkeys(["Experience", "Memory", "MemoryConfig"], "memory"),
    **dict.fromkeys(["MemoryFile", "journal"], "memory_file"),
    **dict.fromkeys(["ChatModel", "ModelError", "ModelReply", "OpenAIModel", "ToolCall", "Usage"], "model"),
    **dict.fromkeys(["OfflineModel"], "offline"),
    **dict.fromkeys(["Habits", "LookUp", "Move", "RequestHabit", "habits_for"], "offline_habits"),
    **dict.fromkeys(["Step", "Trace", "build_system_prompt", "run_react"], "react"),
    **dict.fromkeys(["Reflection", "reflect", "validate_reflection"], "reflect"),
    **dict.fromkeys(["Review", "quick_review"], "review"),
    **dict.fromkeys(["Retriever", "VectorIndex", "select_within_budget"], "retrieval"),
    **dict.fromkeys(["Rule", "RuleSyntaxError", "find_rules", "parse_rule"], "rules"),
    **dict.fromkeys(["count_tokens"], "tokens"),
    **dict.fromkeys(["NotFound", "Tool", "tool"], "tools"),
    **dict.fromkeys(["Grade", "RequestType", "Task", "Words", "World", "grade"], "world"),
}

__all__ = sorted(HOMES)


def __getattr__(name: str) -> object:
    """``ralph_mini.NAME``: import NAME's module on first use, then keep the name here."""
    if name not in HOMES:
        raise AttributeError(f"module 'ralph_mini' has no attribute {name!r}; it exports {__all__}")
    value = getattr(import_module(f"ralph_mini.{HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *HOMES])
