"""A task's result as JSON and back: the records a resumed run rebuilds its history from (notebook 07).

Why: the Ralph Loop decides whether to reflect by looking at the earlier tasks (``loop.recurrence``:
does this task type recur, does this error repeat?). A run continued after a kill with an empty history
would skip reflections the uninterrupted run made, and diverge. So each committed task stores its whole
``TaskResult`` as JSON (``Store.commit_task(result=...)``), and a resume rebuilds it exactly:
``from_json(to_json(r)) == r``. JSON keeps floats exactly (``repr`` round-trips), so the rebuilt
latencies and costs are the same numbers, not rounded ones.

The records are the ones the lower lessons built: ``Task`` (01, any world's: a task's ``check``, which
holds its world, is not saved: a finished task is never graded again), ``Trace`` and ``Step`` (01),
``Review`` and ``Reflection`` (03). ``loop.TaskResult.to_json`` / ``from_json`` use the functions here.

Left out on purpose: a schema version (the store refuses another version of itself) and compression
(a 50-task run is a few hundred kilobytes).
"""

from dataclasses import asdict, fields

from ralph_mini.react import Step, Trace
from ralph_mini.reflect import Reflection
from ralph_mini.review import Review
from ralph_mini.world import Task


def result_to_json(result) -> dict:
    """A ``TaskResult`` as JSON-ready data: its task once, and its traces (the final one and the fast
    loop's discarded ones) without it."""
    data = {f.name: getattr(result, f.name) for f in fields(result)}
    return data | {
        "task": task_to_json(result.task),
        "trace": trace_to_json(result.trace),
        "discarded": [trace_to_json(t) for t in result.discarded],
        "review": asdict(result.review),
        "reflections": [asdict(r) for r in result.reflections],
    }


def result_fields(data: dict) -> dict:
    """The constructor arguments of a ``TaskResult`` from ``result_to_json``'s data, records rebuilt."""
    task = task_from_json(data["task"])
    return data | {
        "task": task,
        "trace": trace_from_json(data["trace"], task),
        "discarded": [trace_from_json(t, task) for t in data.get("discarded", [])],
        "review": Review(**data["review"]),
        "reflections": [reflection_from_json(r) for r in data["reflections"]],
    }


def task_to_json(task: Task) -> dict:
    """A task's fields but its ``check``."""
    return {f.name: getattr(task, f.name) for f in fields(Task) if f.name != "check"}


def task_from_json(data: dict) -> Task:
    """A ``Task``; its tuple of relevant tools came back from JSON as a list."""
    return Task(**data | {"relevant_tools": tuple(data["relevant_tools"])})


def trace_to_json(trace: Trace) -> dict:
    """A trace without its task (the caller stores the task, or knows it): steps, messages, costs."""
    data = {f.name: getattr(trace, f.name) for f in fields(Trace) if f.name != "task"}
    return data | {"steps": [asdict(step) for step in trace.steps]}


def trace_from_json(data: dict, task: Task) -> Trace:
    """The ``Trace`` of ``trace_to_json``, for ``task``."""
    return Trace(task=task, **data | {"steps": [Step(**step) for step in data["steps"]]})


def reflection_from_json(data: dict) -> Reflection:
    """A ``Reflection``: every list field is a tuple in the record."""
    return Reflection(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})
