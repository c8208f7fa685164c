"""The exercises' feedback in the student's language (ralph_mini/exercise/messages.py and its two tables).

The checkers are the same in ``exercises/`` and ``exercises/zh/``; what a student reads comes from
``messages_en.json`` or ``messages_zh.json``. The tables must agree (same keys, same fields per key), every
key the code asks for must exist, and under ``RALPH_LANG=zh`` check(), the hints and the labels must be in
Chinese, with the same verdict as in English and the same values (the student's values, numbers, code).
The English text itself is pinned by tests/test_exercises.py and tests/test_build_exercises.py.
"""

import ast
import re
import string
import sys
from pathlib import Path

import pytest
from test_build_exercises import REFERENCE as BUILD_REFERENCE
from test_build_exercises import STARTERS as BUILD_STARTERS
from test_build_exercises import WRONG as BUILD_WRONG
from test_build_exercises import WRONG_GUARD, make_guard, starter
from test_build_exercises import load as load_build
from test_exercises import REFERENCE as CORE_REFERENCE
from test_exercises import load as load_core
from wrong_answers import STARTERS, WRONG

import ralph_mini.exercise as core
import ralph_mini.exercise.build_your_own as track
from ralph_mini.exercise import messages
from ralph_mini.exercise.messages import Hints, say, table
from ralph_mini.lang import is_chinese

PACKAGE = Path(messages.__file__).resolve().parent
MODULES = sorted(PACKAGE.glob("*.py"))
KEY = re.compile(r"^(label|check|ex\d+[ab]?)\.[a-z0-9_]+$")  # what a message key looks like
# what must come through a translation unchanged: numbers, code identifiers, constants
KEPT = re.compile(r"\b\d+(?:\.\d+)?\b|\b[A-Z][A-Z_]{2,}\b|\b[a-z]+(?:_[a-z0-9]+)+\b")
EXERCISES = {name: getattr(core, name) for name in ("ex1a", "ex1b", "ex2", "ex3", "ex4", "ex5")}
EXERCISES |= {name: getattr(track, name) for name in ("ex6", "ex7a", "ex7b", "ex8", "ex9", "ex11")}
REFERENCES = [(ex.name, module, function, load_core) for ex, module, function in CORE_REFERENCE]
REFERENCES += [(ex.name, module, function, load_build) for ex, module, function in BUILD_REFERENCE]
REFERENCES += [("ex11", "ex11_guard", "check_call", load_build)]


def fields(text: str) -> list[tuple[str, str, str]]:
    """The ``str.format`` fields of a template: (name, conversion, format spec), in order of name."""
    parsed = string.Formatter().parse(text)
    return sorted(
        (name, conversion or "", spec or "") for _, name, spec, conversion in parsed if name is not None
    )


def table_problems(en: dict[str, str], zh: dict[str, str]) -> list[str]:
    """What differs between two tables: keys only in one, fields that differ, a template that breaks."""
    problems = [
        f"{key} only in {side}"
        for side, a, b in (("en", en, zh), ("zh", zh, en))
        for key in a
        if key not in b
    ]
    for key in en.keys() & zh.keys():
        try:
            if fields(en[key]) != fields(zh[key]):
                problems.append(f"{key}: fields {fields(en[key])} in en, {fields(zh[key])} in zh")
        except ValueError as err:  # an unbalanced brace
            problems.append(f"{key}: {err}")
    return problems


def keys_in_code() -> tuple[set[str], dict[str, set[str]]]:
    """The message keys the checkers spell out, and per module the prefixes of keys they build
    (``say(f"ex3.{label}")``) with the string literals that module holds (its labels)."""
    spelt, built = set(), {}
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parts = {
            id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values
        }
        literals = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts
        }
        spelt |= {text for text in literals if KEY.match(text)}
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) and isinstance(node.values[0], ast.Constant):
                prefix = node.values[0].value
                if KEY.match(prefix + "x"):
                    built.setdefault(prefix, set()).update(text.replace(" ", "_") for text in literals)
    return spelt, built


# --- the tables ---------------------------------------------------------------------------------------


def test_both_tables_have_the_same_keys_and_fields():
    assert table_problems(table("en"), table("zh")) == []
    assert len(table("en")) == len(table("zh")) > 300


def test_the_table_comparison_can_fail():
    en = {"a.b": "you returned {returned!r}", "a.c": "x", "a.d": "{n:.2f} calls"}
    zh = {"a.b": "你返回了 {returned}", "a.d": "{n} 次调用", "a.e": "多余"}
    assert sorted(table_problems(en, zh)) == [
        "a.b: fields [('returned', 'r', '')] in en, [('returned', '', '')] in zh",
        "a.c only in en",
        "a.d: fields [('n', '', '.2f')] in en, [('n', '', '')] in zh",
        "a.e only in zh",
    ]
    assert table_problems({"a.b": "{oops"}, {"a.b": "{oops"}) == ["a.b: expected '}' before end of string"]


def test_every_chinese_message_is_chinese_and_every_english_one_is_not():
    for key, text in table("zh").items():
        if key not in ("label.line", "label.block", "label.bold", "check.wrong"):  # fields and punctuation
            assert is_chinese(text), f"{key}: {text!r}"
    assert not any(is_chinese(text) for text in table("en").values())


def test_every_key_the_checkers_spell_exists_and_every_key_is_used():
    spelt, built = keys_in_code()
    assert spelt and not spelt - table("en").keys(), sorted(spelt - table("en").keys())
    hints = {f"{name}.hint{n}" for name in EXERCISES for n in range(1, len(EXERCISES[name].hints) + 1)}
    used = spelt | hints | {prefix + text for prefix, texts in built.items() for text in texts}
    assert sorted(table("en").keys() - used) == []
    assert {"ex3.", "ex6.why_", "label."} <= built.keys()  # the scan sees the keys built from labels


def test_every_exercise_has_three_hints_in_both_languages(monkeypatch):
    for name, exercise in EXERCISES.items():
        assert exercise.hints == Hints(name) and len(exercise.hints) == 3, name
    monkeypatch.setenv("RALPH_LANG", "zh")
    for exercise in EXERCISES.values():
        hints = [exercise.hint(level) for level in (1, 2, 3)]
        assert [note.label for note in hints] == ["提示 1/3", "提示 2/3", "提示 3/3"]
        assert all(is_chinese(note.text) for note in hints) and str(hints[0]).startswith("提示 1/3：")
        assert exercise.hint(9).text == hints[2].text == exercise.hints[-1]
    monkeypatch.setenv("RALPH_LANG", "en")
    assert not any(is_chinese(text) for exercise in EXERCISES.values() for text in exercise.hints[:])


# --- check(), hint() and solution() in Chinese --------------------------------------------------------


def both(monkeypatch, check):
    """(English, Chinese) results of the same call."""
    monkeypatch.setenv("RALPH_LANG", "en")
    english = check()
    monkeypatch.setenv("RALPH_LANG", "zh")
    return english, check()


def assert_same_verdict_in_chinese(english, chinese):
    assert (chinese.passed, chinese.attempted) == (english.passed, english.attempted)
    assert is_chinese(chinese.message) and chinese.message != english.message, chinese.message
    assert not is_chinese(english.message), english.message
    kept = set(KEPT.findall(english.message)) - set(KEPT.findall(chinese.message))
    assert not kept, f"{sorted(kept)} lost in: {chinese.message}"


@pytest.mark.parametrize("name, answer, _", WRONG, ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG)])
def test_a_wrong_answer_is_told_in_chinese_with_the_same_verdict(name, answer, _, monkeypatch):
    english, chinese = both(monkeypatch, lambda: EXERCISES[name].check(answer))
    # shown after the switch to Chinese, a result keeps the language it was made in
    assert str(english).startswith("Incorrect: ") and str(chinese).startswith("不正确：")
    assert_same_verdict_in_chinese(english, chinese)


BUILD_SAMPLE = [w for i, w in enumerate(BUILD_WRONG) if i % 3 == 0]  # every exercise of the track, faster


@pytest.mark.parametrize(
    "name, answer, _", BUILD_SAMPLE, ids=[f"{w[0]}-{i}" for i, w in enumerate(BUILD_SAMPLE)]
)
def test_a_wrong_answer_to_the_track_is_told_in_chinese(name, answer, _, monkeypatch):
    english, chinese = both(monkeypatch, lambda: EXERCISES[name].check(answer))
    assert_same_verdict_in_chinese(english, chinese)


@pytest.mark.parametrize("mistake", [w[0] for w in WRONG_GUARD[::3]])
def test_a_wrong_guard_is_told_in_chinese(mistake, monkeypatch):
    english, chinese = both(monkeypatch, lambda: track.ex11.check(make_guard(mistake)))
    assert_same_verdict_in_chinese(english, chinese)


def test_the_starters_are_not_attempted_in_chinese(monkeypatch):
    monkeypatch.delattr(sys, "last_value", raising=False)
    starters = [(name, answer) for name, answer in STARTERS]
    starters += [(name, starter(function)) for name, function in [*BUILD_STARTERS, ("ex11", "check_call")]]
    for name, answer in starters:
        english, chinese = both(monkeypatch, lambda ex=EXERCISES[name], answer=answer: ex.check(answer))
        assert str(chinese).startswith("尚未作答：") and chinese.label == "尚未作答", name
        assert_same_verdict_in_chinese(english, chinese)
    assert (
        "#9a6700" in chinese._repr_html_()
        and "<b style='color:#9a6700'>尚未作答：</b>" in chinese._repr_html_()
    )


@pytest.mark.parametrize("name, module, function, load", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_a_correct_answer_is_correct_in_chinese(name, module, function, load, monkeypatch):
    english, chinese = both(monkeypatch, lambda: EXERCISES[name].check(getattr(load(module), function)))
    assert str(chinese).startswith("正确：") and "#1a7f37" in chinese._repr_html_()
    assert_same_verdict_in_chinese(english, chinese)
    assert chinese.message.startswith(f"{function} 通过了全部 ")
    if name == "ex11":  # the guard is also tried in run_react
        assert "放进 run_react 跑了 24 次" in chinese.message


def test_an_error_and_a_value_instead_of_a_function_are_told_in_chinese(monkeypatch):
    def should_stop(statuses, max_pitfall_depth):
        return statuses[99]

    english, chinese = both(monkeypatch, lambda: core.ex2.check(should_stop))
    assert_same_verdict_in_chinese(english, chinese)
    assert chinese.message == (
        "当 statuses=['ok', 'ok']、max_pitfall_depth=3 时，你的函数抛出了 IndexError: list index out of range"
    )
    _, chinese = both(monkeypatch, lambda: core.ex1b.check("3 fields: status=paid"))
    assert "请直接传函数本身，例如 ex1b.check(compress)" in chinese.message


def test_the_solution_is_the_same_code_under_a_chinese_label(monkeypatch):
    english, chinese = both(monkeypatch, core.ex1a.solution)
    assert chinese.text == english.text and chinese.code
    assert (english.label, chinese.label) == ("Solution (ex01_tool.py)", "参考答案（ex01_tool.py）")
    assert str(chinese).startswith("参考答案（ex01_tool.py）：\n@tool(")


def test_the_language_is_read_when_a_message_is_made(monkeypatch, tmp_path):
    """No RALPH_LANG: the nearest .ralph_lang decides, as for a kernel in exercises/zh/."""
    monkeypatch.delenv("RALPH_LANG", raising=False)
    (tmp_path / "zh" / "ex").mkdir(parents=True)
    (tmp_path / "zh" / ".ralph_lang").write_text("zh\n")
    (tmp_path / "en").mkdir()
    monkeypatch.chdir(tmp_path / "zh" / "ex")
    assert say("label.correct") == "正确" and str(core.ex4.hint()).startswith("提示 1/3：")
    monkeypatch.chdir(tmp_path / "en")
    assert say("label.correct") == "Correct" and str(core.ex4.hint()).startswith("Hint 1/3: ")


def test_english_is_as_it_was(monkeypatch):
    monkeypatch.setenv("RALPH_LANG", "en")
    monkeypatch.delattr(sys, "last_value", raising=False)
    assert str(core.ex2.check(STARTERS[2][1])) == (
        "Not attempted yet: write the body of should_stop, run its cell, then run this cell again"
    )
    assert str(core.ex2.hint(2)) == (
        "Hint 2/3: The run may go on while the count is at most max_pitfall_depth: stop only when it is "
        "strictly more."
    )
    assert say("check.passed", function="f", count=3) == "f passed all 3 cases, edge cases included."
