"""The reflector: from a compact log to specific, reusable rules, held to a template (notebook 03).

The seed article's lessons, built in:

- feed the reflector the compact step log (``log.py``), never the raw transcript;
- demand a fixed template of four sections: effective steps, ineffective steps, reusable rules,
  behaviours to avoid; each item at most ``max_words`` words;
- reject a reply that breaks the template (a missing section, a long item, a vague item that names no
  tool or field, a rule outside the micro-prompt grammar, an item naming one record, person, amount or
  time (``lesson_guards.instance_details``, the same guard memory applies to rules), or nothing in the
  two step sections), say why, and ask again, at most ``max_reflection_rounds`` attempts in all; then
  give up with ``Reflection.ok = False`` and the reason, never garbage.

Every world word in the prompt and the checks comes from the world's ``Words`` and tools' roles.

Also here: ``reflection_text``, what a reflector reads (the compact log and the grader's verdict line,
which names the rejected fields, never their right values). The fast loop's own check of one run,
``quick_review``, is ``review.py``.

Left out on purpose: free-form advice (it is what the template exists to prevent) and any memory
write: deciding what to keep is ``memory.py``'s job.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from ralph_mini.lesson_guards import Vocabulary, instance_details
from ralph_mini.log import format_for_reflection, log_run
from ralph_mini.model import ChatModel
from ralph_mini.react import Trace
from ralph_mini.rules import RuleSyntaxError, parse_rule
from ralph_mini.tools import Tool
from ralph_mini.world import Grade, Words

SECTIONS = ("EFFECTIVE STEPS", "INEFFECTIVE STEPS", "REUSABLE RULES", "AVOID")

REFLECTOR_PROMPT = """You are the reflector of {job}. You read the compact execution
log of its runs and write lessons that make its next runs cheaper and still correct.

{frame}

Tools the agent has:
{tool_docs}

Reply in exactly this template: four sections in this order, each item one line starting with "- ",
at most {max_words} words per item; write "- none" for an empty section.

EFFECTIVE STEPS:
- <a step that brought a field the answer needed; name the tool and the field>
INEFFECTIVE STEPS:
- <a step that brought nothing the answer needed; name the tool and say why>
REUSABLE RULES:
- <one rule in the micro-prompt grammar below>
AVOID:
- <a behaviour to avoid; name the tool>

Micro-prompt grammar, one rule per item:
  when TRIGGER: ACTION[; ACTION]
  TRIGGER is "any task", "TOOL finds the {noun}", "TOOL finds nothing",
          or "status is WORD" optionally followed by "and age under N min" / "and age over N min"
  ACTION is "answer", "skip TOOL", "call TOOL" or "start with TOOL"
Every item names a tool or a field ({fields}).
Never name a specific {noun}, person or value: a rule must hold for every {noun}."""
# The world's record words, in one line the offline reflector reads back (``offline_log.read_frame``).
FRAME_LINE = (
    'Records are "{noun}": status field {status_field}, creation time field {created_field}, '
    "answer for no such record {missing}."
)

UNTEMPLATED_PROMPT = "You review an AI agent's work. Say how it could do better."

REASK = "Your reply breaks the template: {problems}. Reply again, in the template only."


@dataclass(frozen=True)
class Reflection:
    """A validated reflection, or (``ok=False``) the reason there is none."""

    ok: bool
    effective: tuple[str, ...] = ()
    ineffective: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    reason: str = ""
    rejections: tuple[str, ...] = ()  # why each earlier round was sent back
    rounds: int = 0
    tokens: int = 0
    latency_s: float = 0.0


def parse_sections(text: str) -> dict[str, list[str]]:
    """'EFFECTIVE STEPS:\\n- a\\n...' -> {'EFFECTIVE STEPS': ['a'], ...}; '- none' gives []."""
    sections: dict[str, list[str]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        heading = line.rstrip(":").upper()
        if line.endswith(":") and heading in SECTIONS:
            current = heading
            sections[current] = []
        elif line.startswith("- ") and current is not None:
            item = line[2:].strip()
            if item.lower() != "none":
                sections[current].append(item)
    return sections


def validate_reflection(text: str, words: Words, tool_names: Sequence[str], max_words: int = 30) -> list[str]:
    """Every way ``text`` breaks the template, as short reasons; [] means valid. A specific item names one
    of ``tool_names`` or one of the world's fields; none names an instance (``words`` say what is not)."""
    sections = parse_sections(text)
    problems = [f"missing section {name}" for name in SECTIONS if name not in sections]
    if not problems and list(sections) != list(SECTIONS):
        problems.append("sections out of order: use " + ", ".join(SECTIONS))
    if not problems and not (sections["EFFECTIVE STEPS"] or sections["INEFFECTIVE STEPS"]):
        problems.append("empty reflection: name at least one effective or ineffective step")
    names = (*tool_names, *words.fields, words.id_argument)
    for section, items in sections.items():
        for item in items:
            problems.extend(f"{section}: {p}" for p in item_problems(item, section, max_words, names, words))
    return problems


def item_problems(item: str, section: str, max_words: int, names: Sequence[str], words: Words) -> list[str]:
    found = []
    count = len(item.split())
    if count > max_words:
        found.append(f"item has {count} words, over {max_words}: '{item[:40]}...'")
    if not any(name in item.lower() for name in names):
        found.append(f"vague item names no tool or field: '{item[:60]}'")
    vocabulary = Vocabulary.of(words, names)  # as memory and the loop pass it to the filter
    if details := instance_details(item, **vocabulary.filter_arguments()):
        found.append(
            f"item names a specific instance ({', '.join(details)}); it must hold for every {words.noun}"
        )
    if section == "REUSABLE RULES":
        try:
            parse_rule(item)
        except RuleSyntaxError as err:
            found.append(f"rule outside the grammar: {err}")
    return found


def tool_roles(tool: Tool, noun: str) -> str:
    """The roles a tool declares, as the reflector reads them: ' (writes)', ' (holds every order)',
    ' (learns of every order 30 min after it is created)'; '' for none."""
    roles = ["writes"] if tool.writes else []
    roles += [f"holds every {noun}"] if tool.holds_every else []
    roles += (
        [f"learns of every {noun} {tool.lag_min} min after it is created"] if tool.lag_min is not None else []
    )
    return f" ({', '.join(roles)})" if roles else ""


def reflection_messages(
    log_text: str, tools: Sequence[Tool], words: Words, max_words: int = 30
) -> list[dict]:
    """The exact messages sent to the reflector: the template prompt (the world's record words, each tool
    with the roles it declares) and the compact log."""
    tool_docs = "\n".join(f"- {t.name}{tool_roles(t, words.noun)}: {t.description}" for t in tools)
    frame = FRAME_LINE.format(noun=words.noun, status_field=words.status_field,
                              created_field=words.created_field, missing=words.missing)  # fmt: skip
    system = REFLECTOR_PROMPT.format(
        job=words.job, frame=frame, tool_docs=tool_docs, max_words=max_words, noun=words.noun,
        fields=", ".join(words.fields),
    )  # fmt: skip
    return [{"role": "system", "content": system}, {"role": "user", "content": log_text}]


def reflect(
    log_text: str,
    model: ChatModel,
    tools: Sequence[Tool],
    words: Words,
    *,
    max_reflection_rounds: int = 2,
    max_words: int = 30,
) -> Reflection:
    """Ask for a templated reflection on ``log_text``; validate; re-ask with the reasons; give up cleanly."""
    messages = reflection_messages(log_text, tools, words, max_words)
    tokens, latency, problems = 0, 0.0, ["no attempt"]
    rejections: list[str] = []
    tool_names = [t.name for t in tools]
    for round_number in range(1, max_reflection_rounds + 1):
        reply = model.complete(messages, [])
        tokens += reply.usage.prompt_tokens + reply.usage.completion_tokens
        latency += reply.latency_s
        text = reply.content or ""
        problems = validate_reflection(text, words, tool_names, max_words)
        if not problems:
            sections = parse_sections(text)
            return Reflection(
                ok=True,
                effective=tuple(sections["EFFECTIVE STEPS"]),
                ineffective=tuple(sections["INEFFECTIVE STEPS"]),
                rules=tuple(str(parse_rule(r)) for r in sections["REUSABLE RULES"]),
                avoid=tuple(sections["AVOID"]),
                rejections=tuple(rejections),
                rounds=round_number,
                tokens=tokens,
                latency_s=round(latency, 3),
            )
        rejections.append("; ".join(problems))
        messages = [*messages, {"role": "assistant", "content": text}]
        messages.append({"role": "user", "content": REASK.format(problems="; ".join(problems))})
    reason = f"no reflection after {max_reflection_rounds} rounds: " + "; ".join(problems)
    return Reflection(
        ok=False,
        reason=reason,
        rejections=tuple(rejections),
        rounds=max_reflection_rounds,
        tokens=tokens,
        latency_s=round(latency, 3),
    )


def ask_untemplated(transcript: str, model: ChatModel) -> str:
    """The contrast for notebook 03: the whole transcript and an open question, no template."""
    messages = [
        {"role": "system", "content": UNTEMPLATED_PROMPT},
        {"role": "user", "content": transcript},
    ]
    return model.complete(messages, []).content or ""


def reflection_text(trace: Trace, run_id: str, correct: bool | None, verdict: Grade | None = None) -> str:
    """The compact log a reflector reads (``log.format_for_reflection``), then the grader's verdict: the
    names of the fields it rejected, never their right values."""
    text = format_for_reflection(*log_run(trace, run_id, correct))
    if correct is None:
        return text + "\ngrader: not graded"
    if correct or verdict is None or not verdict.wrong_fields:
        return text + f"\ngrader: {'accepted' if correct else 'rejected'}"
    return text + "\ngrader: rejected; wrong or missing: " + ", ".join(sorted(verdict.wrong_fields))
