"""Every number in the README's result tables comes from a command the repo keeps (issue 13).

Each test reruns the command a README table (or a sentence quoting a result) was made from, on the
offline model, and compares: a table's rows must be exactly the computed rows, cell by cell; a
sentence must contain the computed numbers as the README writes them. When a change to the kit moves
a number, this fails and names the row, the column, the README's value and the measured one: rerun
the command and update the README (and the notebook it came from), never the other way round.

Not covered here, because their source is not cheap or not offline: the MiniLM hit rates (torch and a
model download, ``python benchmarks/retrieval.py --minilm``), the faiss speed-up (wall-clock), the
tiny real model's numbers (``docs/real_models.md``, cassettes) and the run times of the test suite.

The Chinese README (README.zh.md, issue 28) is pinned to README.md rather than to the commands: section
by section, the same code blocks byte for byte, the same tables cell by cell (a cell of numbers exactly
as written; in a cell of words, the same numbers and `code`), and the same numbers and `code` in the
prose, whatever the words around them. So a number README.md changes must change in both.
"""

import importlib.util
import re
from collections import Counter
from dataclasses import fields, is_dataclass
from importlib import import_module
from pathlib import Path

import pytest

from ralph_mini import OfflineModel, grade, run_react
from ralph_mini.bench import BARE, RALPH, run_agent, seed_grid
from ralph_mini.clock import FakeClock
from ralph_mini.log import format_for_reflection, log_run
from ralph_mini.loop import LoopConfig, run_loop
from ralph_mini.measure import record, run_suite, summarize, windows
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.reflect import reflect
from ralph_mini.retrieval import (
    Retriever,
    build_labelled_memory,
    hit_rates,
    injected_tokens,
    load_labelled_set,
    select_within_budget,
)
from ralph_mini.worlds import clinic, orders

README = Path(__file__).resolve().parents[1] / "README.md"
COLUMN_KEYS = {"oracle": "oracle calls/task"}  # README header -> ``measure.summarize`` key, where they differ


def table_blocks(text: str) -> list[list[list[str]]]:
    """Every pipe table in ``text``, as its lines of cells: the header, the |---| line, the rows."""
    tables, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))  # a "\|" inside a cell is text
            block.append([cell.strip() for cell in cells])
            continue
        if len(block) > 2:
            tables.append(block)
        block = []
    return tables


def markdown_tables(text: str) -> list[list[dict[str, str]]]:
    """Every pipe table in ``text``, as rows of {header: cell}."""
    return [[dict(zip(b[0], row, strict=True)) for row in b[2:]] for b in table_blocks(text)]


def readme_table(first_cell: str) -> list[dict[str, str]]:
    """The one README table with a row whose first cell is ``first_cell``."""
    text = README.read_text(encoding="utf-8")
    found = [t for t in markdown_tables(text) if any(next(iter(row.values())) == first_cell for row in t)]
    assert len(found) == 1, f"expected one README table with a row {first_cell!r}, found {len(found)}"
    return found[0]


def same(cell: str, value) -> bool:
    """A README cell states ``value``: the same number (2.80 states 2.8), or the same text ('50/50')."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(cell) == float(value)
        except ValueError:
            return False
    return cell == str(value)


def assert_table(table: list[dict[str, str]], computed: list[dict], key_columns: tuple[str, ...]) -> None:
    """The README rows are exactly the computed rows, in order, every cell equal."""
    names = [tuple(row[c] for c in key_columns) for row in table]
    expected = [tuple(str(row[COLUMN_KEYS.get(c, c)]) for c in key_columns) for row in computed]
    assert names == expected, f"README rows {names}, the command gives {expected}"
    for row, numbers in zip(table, computed, strict=True):
        for column, cell in row.items():
            value = numbers[COLUMN_KEYS.get(column, column)]
            assert same(cell, value), (
                f"README row {row[key_columns[0]]!r}, {column!r}: {cell}, measured {value}"
            )


def assert_says(sentence: str) -> None:
    """The README contains ``sentence`` (line breaks are spaces: sentences wrap anywhere)."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert sentence in text, f"README.md should say, with the measured numbers: {sentence!r}"


WORDS = orders.WORDS


@pytest.fixture(scope="module")
def suite():
    return orders.make_suite(n=50, seed=7)


@pytest.fixture(scope="module")
def model():
    return OfflineModel(seed=0, habits=orders.HABITS)


@pytest.fixture(scope="module")
def bare(suite, model) -> list:
    return [record(t) for t in run_suite(suite.tasks, model, suite.world.tools())]


@pytest.fixture(scope="module")
def benchmark(suite, model) -> dict:
    """``python -m ralph_mini bench`` without ablations: bare ReAct and the Ralph Loop, per window."""
    tools = suite.world.tools()
    return {
        agent.name: run_agent(agent, suite.tasks, model, tools, words=WORDS)[0] for agent in (BARE, RALPH)
    }


def test_notebook_01_baseline_table(suite, model, bare):
    core = [record(t) for t in run_suite(suite.tasks, model, suite.world.tools(core_only=True))]
    computed = [summarize(bare, "bare ReAct, all 9 tools"), summarize(core, "bare ReAct, 3 core tools")]
    assert_table(readme_table("bare ReAct, all 9 tools"), computed, ("agent",))


def test_notebook_03_one_reflection_table(suite, model, bare):
    tools = suite.world.tools()
    task = suite.tasks[1]  # B456, as in notebook 03
    wasteful = run_react(task, model, tools)
    log_text = format_for_reflection(*log_run(wasteful, "R002", grade(task, wasteful.answer).correct))
    reflection = reflect(log_text, model, tools, WORDS)
    after = [record(t) for t in run_suite(suite.tasks, model, tools, lessons=reflection.rules)]
    computed = [summarize(bare, "bare ReAct"), summarize(after, "bare ReAct + 1 reflection")]
    assert_table(readme_table("bare ReAct + 1 reflection"), computed, ("agent",))


def test_benchmark_table(benchmark):
    computed = [row for name, records in benchmark.items() for row in windows(records, name)[:2]]
    assert_table(readme_table("Ralph Loop"), computed, ("agent", "tasks"))


def test_benchmark_sentence(benchmark):
    every_bare = windows(benchmark[BARE.name], BARE.name)[2]
    late_ralph = windows(benchmark[RALPH.name], RALPH.name)[1]
    sentence = (
        f"goes {every_bare['calls/task']:.2f} -> {late_ralph['calls/task']:.2f} calls and "
        f"{every_bare['virtual s/task']} -> {late_ralph['virtual s/task']} virtual seconds"
    )
    assert_says(sentence)


def planted_wrong_answers(suite, model, config: MemoryConfig, calls_saved: int = 0) -> int:
    """Notebook 04's pollution experiment: a bad rule planted in an empty memory, 50 tasks."""
    clock = FakeClock()
    memory = Memory(clock, config)
    memory.propose("when query_local_cache finds nothing: answer", task_id="special", run_id="S1",
                   task_type=orders.words.STATUS, calls_saved=calls_saved)  # fmt: skip
    runs = run_loop(suite.tasks, model, suite.world.tools(), memory, words=WORDS,
                    between_tasks=lambda m: clock.advance(hours=6))  # fmt: skip
    return sum(not r.correct for r in runs)


def test_notebook_04_sentence(suite, model, bare):
    clock = FakeClock()
    results = run_loop(suite.tasks, model, suite.world.tools(), Memory(clock), words=WORDS,
                       between_tasks=lambda m: clock.advance(hours=6))  # fmt: skip
    late, late_bare = summarize([r.record for r in results[20:]], "memory"), summarize(bare[20:], "bare")
    never = 10**9  # notebook 04's "guards off": every guard that can end a rule switched off
    no_guards = MemoryConfig(
        confirm_threshold=1, max_failures=never, recent_failures=never, max_wrong_answers=never
    )
    wrong = [
        planted_wrong_answers(suite, model, no_guards),
        planted_wrong_answers(suite, model, MemoryConfig()),
        planted_wrong_answers(suite, model, MemoryConfig(probation=False)),
        planted_wrong_answers(suite, model, MemoryConfig(), calls_saved=5),
    ]
    assert_says(
        f"tasks 21-50: {late['calls/task']:.2f} calls per task (oracle {late['oracle calls/task']:.2f}, bare "
        f"ReAct {late_bare['calls/task']:.2f}), {late['wrong calls']} wrong calls (bare ReAct "
        f"{late_bare['wrong calls']}), {late['correct']} correct, {late['tokens/task']} tokens per task with "
        f"reflections included (bare ReAct {late_bare['tokens/task']})"
    )
    assert_says(
        f"{wrong[0]} wrong answers out of 50 with the guards off, {wrong[1]} with the guards (probation "
        f"injects it at once), {wrong[2]} with the guards but no probation, {wrong[3]} (then invalidated) "
        "when forced past the write threshold"
    )


def test_notebook_05_sentence():
    memory = Memory(FakeClock())
    keys = build_labelled_memory(memory)
    tables = {mode: hit_rates(Retriever(memory, mode=mode), keys) for mode in Retriever.MODES}
    top3 = {mode: sum(row["hit@3"] for row in table.values()) for mode, table in tables.items()}
    chinese = {mode: table["Chinese"]["hit@3"] for mode, table in tables.items()}
    retriever = Retriever(memory)
    ranked = [
        [h.experience for h in retriever.search(q["text"], k=10)] for q in load_labelled_set()["queries"]
    ]
    free = round(sum(injected_tokens(r) for r in ranked) / len(ranked), 1)
    capped = round(sum(injected_tokens(select_within_budget(r, 8192)) for r in ranked) / len(ranked), 1)
    assert_says(
        f"keyword {top3['keyword']}, vector {top3['vector']}, hybrid {top3['hybrid']} (Chinese questions: "
        f"{chinese['keyword']}, {chinese['vector']}, {chinese['hybrid']} of 10)"
    )
    assert_says(f"Injected tokens per question: {free} without the budget, {capped} with it.")


def test_lessons_table_budget_matches_loop_config():
    config = LoopConfig()
    row = next(r for r in readme_table("`05_vector_retrieval.ipynb`") if r["notebook"].startswith("`05"))
    assert re.search(
        rf"\b{round(config.injection_budget * 100)}% / {config.top_k}-lesson", row["what it adds"]
    )


def test_scenario_table_and_the_rephrased_sentence():
    """``python -m ralph_mini bench --scenario all``: bare ReAct against the full loop (model seed 0)."""
    from ralph_mini.scenario_bench import BARE as BARE_ARM
    from ralph_mini.scenario_bench import FULL, paired_rows, run_arm, run_follow_rate
    from ralph_mini.worlds.shop.scenarios import SCENARIOS

    computed = []
    for name in SCENARIOS:
        bare_run, full_run = run_arm(name, BARE_ARM), run_arm(name, FULL)
        b, f = summarize(bare_run.records, "bare"), summarize(full_run.records, "full")
        n = len(bare_run.records)
        computed.append({"scenario": name, "tasks": n,
                         "correct, bare": f"{sum(r.correct for r in bare_run.records)}/{n}",
                         "correct, Ralph": f"{sum(r.correct for r in full_run.records)}/{n}",
                         "calls/task, bare": b["calls/task"], "calls/task, Ralph": f["calls/task"],
                         "oracle calls/task": b["oracle calls/task"], "tokens/task, bare": b["tokens/task"],
                         "tokens/task, Ralph": f["tokens/task"],
                         "lessons followed, Ralph": run_follow_rate(full_run)})  # fmt: skip
        if name == "rephrased":
            paired, bare_paired = paired_rows(full_run), paired_rows(bare_run)
    assert_table(readme_table("static"), computed, ("scenario",))

    def calls(rows):
        return f"{rows[0]['calls/task']:.2f}, {rows[1]['calls/task']:.2f} and {rows[2]['calls/task']:.2f}"

    assert len({row["correct"] for row in paired}) == len({row["correct"] for row in bare_paired}) == 1
    assert_says(
        f"the loop makes {calls(paired)} calls/task and answers {paired[0]['correct']} in each (bare ReAct: "
        f"{calls(bare_paired)} calls, {bare_paired[0]['correct']} each)"
    )


def test_third_world_grid_table():
    """``python -m ralph_mini bench --world clinic --grid 4x2``: the clinic's targets, cell by cell."""
    computed = seed_grid(clinic, 50, range(7, 11), range(2))
    table = readme_table("7")
    assert [(row["suite seed"], row["model seed"]) for row in table] == [
        (str(r["suite seed"]), str(r["model seed"])) for r in computed
    ]
    for row, numbers in zip(table, computed, strict=True):
        assert all(same(cell, numbers[column]) for column, cell in row.items()), (row, numbers)


def test_third_world_grid_on_seeds_the_kit_was_not_tuned_on():
    """``bench --world clinic --grid 30x4``: how many cells meet the targets, have no room, or miss."""
    rows = seed_grid(clinic, 50, range(7, 37), range(4))
    verdicts = Counter(row["targets met"] for row in rows)
    missed = [row for row in rows if row["targets met"] == "NO"]

    def span(values: list[int]) -> str:
        return f"{min(values)}-{max(values)}%"

    fewer = span([int(row["fewer calls"].rstrip("%")) for row in missed])
    there = span([int(row["oracle saves"].rstrip("%")) for row in missed])
    worst = max(row["Ralph vs oracle"] for row in missed)
    assert all(row["correct, Ralph"] >= row["correct, bare"] for row in missed)  # both "n/30"
    assert_says(
        f"30 suite seeds x 4 model seeds (`--grid 30x4`, 6 s), {verdicts['yes']} of the {len(rows)} cells "
        f"meet all three targets; in {verdicts['no room']} bare ReAct left less than 25% to save"
    )
    assert_says(
        f"{verdicts['NO']} miss the 25%: the loop makes {fewer} fewer calls where {there} was there to "
        f"save (within {worst}x the oracle"
    )


def test_bad_lessons_in_the_clinic_as_the_readme_says():
    """``python benchmarks/bad_lessons.py --world clinic``: where the guards do not hold in a world
    the mechanisms were not tuned on. When a change makes them hold, this fails: rewrite the README."""
    spec = importlib.util.spec_from_file_location(
        "bad_lessons", README.parent / "benchmarks" / "bad_lessons.py"
    )
    bad = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bad)
    pairs = [(s, m) for s in range(7, 11) for m in range(2)]
    clean = {p: bad.run(clinic, *p, [], MemoryConfig()) for p in pairs}
    clean_calls = sum(r.calls for records, _, _ in clean.values() for r in records)
    lost, added, fired = {}, {}, {}
    for name, rule in bad.bad_lessons(clinic.HABITS).items():
        runs = {p: bad.run(clinic, *p, [rule], MemoryConfig()) for p in pairs}
        lost[name] = sum(r.correct for p in pairs for r in clean[p][0]) - sum(
            r.correct for p in pairs for r in runs[p][0]
        )
        added[name] = sum(r.calls for records, _, _ in runs.values() for r in records) / clean_calls - 1
        each = [bad.firings(rule, results, memory, clinic.WORDS) for _, results, memory in runs.values()]
        fired[name] = "never" if "never" in each else max(map(int, each))
    assert max(lost.values()) * 100 / (50 * len(pairs)) == 2.0  # "at most 2.0 points"
    every = {
        p: bad.run(clinic, *p, list(bad.bad_lessons(clinic.HABITS).values()), MemoryConfig()) for p in pairs
    }
    points = sum(r.correct for p in pairs for r in clean[p][0]) - sum(
        r.correct for p in pairs for r in every[p][0]
    )
    fewer = 1 - sum(r.calls for records, _, _ in every.values() for r in records) / clean_calls
    assert_says(f"All six at once cost more answers than before ({100 * points / (50 * len(pairs)):.1f}")
    assert_says(f"points against 2.0, with {100 * fewer:.1f}% fewer calls instead of 13.4% more)")
    call, start = added["over-general call"], added["start with the slow source"]
    assert f"{100 * call:.1f}" == f"{100 * start:.1f}"
    assert fired["over-general call"] == fired["start with the slow source"] != "never"
    assert_says(
        f"Both now add {100 * call:.1f}% more calls and go within {fired['over-general call']} firings, and "
        "the kit's own tables did not move."
    )
    assert_says(
        f"the wrong answer and the over-general skip go only after {fired['wrong answer']} and "
        f"{fired['over-general skip']} firings"
    )


def test_the_ablation_grid_on_seeds_further_out():
    """``bench --ablation-grid 20x4``: the cells the full loop loses, and keyword retrieval's total."""
    from ralph_mini import ablation_grid

    runs = ablation_grid.run_grid(range(7, 27), range(4), jobs=2)
    judged = ablation_grid.verdicts(ablation_grid.cells(runs))
    lost = [row for row in judged if row["beaten by"] != "-"]
    margins = sorted(row["full: calls"] - row["best calls"] for row in lost)

    def calls(arm: str) -> int:
        return sum(sum(r.calls for r in recs[20:]) for (_, _, a), recs in runs.items() if a == arm)

    assert {row["beaten by"] for row in lost} == {"keyword retrieval only"}
    assert_says(
        f"it loses {len(lost)} of {len(judged)} cells, each to keyword retrieval alone, by "
        f"{' and '.join(map(str, margins))} calls, and keyword retrieval alone makes "
        f"{calls('keyword retrieval only')} calls in all against the full loop's {calls(ablation_grid.FULL.name)}"
    )


def test_held_out_drifts_as_the_readme_says():
    """``python benchmarks/held_out_drifts.py``: six drifts written apart from the scenarios."""
    from ralph_mini.held_out_bench import held_out_rows

    rows = held_out_rows(range(7, 27), jobs=2)

    def span(values) -> str:
        return f"{min(values)}-{max(values)}"

    right = {arm: [int(row[f"correct, {arm}"].split("/")[0]) for row in rows] for arm in ("bare", "Ralph")}
    fewer = [round(100 * (1 - row["calls, Ralph"] / row["calls, bare"])) for row in rows]
    assert_says(
        f"The loop answers {span(right['Ralph'])} of 1200 right where bare ReAct answers "
        f"{span(right['bare'])}, with {span(fewer)}% fewer calls, and it answers fewer right than bare "
        f"ReAct on {sum(row['seeds the loop lost'] for row in rows)} of the {len(rows) * 20} runs."
    )


def test_the_reading_path_gives_each_module_s_size():
    """The README's reading path: every module it names exists, with the line count it gives."""
    table = readme_table("1.")
    assert table, "README.md should have the reading path table"
    for row in table:
        path = README.parent / "ralph_mini" / row["module"].strip("`")
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert int(row["lines"]) == lines, (
            f"README's reading path: {path.name} has {lines} lines, not {row['lines']}"
        )


def test_the_enforcement_sentence():
    """``python -m ralph_mini bench --enforce all``: prompt vs guard vs both on every scenario."""
    from ralph_mini.enforce_bench import cost_table

    rows = {(r["scenario"], r["agent"]): r for r in cost_table()}
    scenarios = sorted({s for s, _ in rows})
    both = [rows[(s, "Ralph Loop, both")] for s in scenarios]
    assert all(
        b["correct"] == rows[(s, "Ralph Loop, prompt")]["correct"]
        for s, b in zip(scenarios, both, strict=True)
    )
    guard = {s: rows[(s, "Ralph Loop, guard")] for s in scenarios}
    refusals = sorted(g["refusals"] for g in guard.values())
    worse = [
        s
        for s in scenarios
        if s != "static" and guard[s]["correct"] < rows[(s, "Ralph Loop, prompt")]["correct"]
    ]
    drift = f"{guard['drift']['correct']} against {rows[('drift', 'Ralph Loop, prompt')]['correct']}"
    assert_says(f"with at most {max(b['refusals'] for b in both)} refusals")
    assert_says(
        f"costs {refusals[0]} to {refusals[-1]} refusals a scenario and loses correct answers on five"
    )
    assert len(worse) == 5, worse
    assert_says(f"(drift: {drift})")


# --- README.zh.md: the same numbers, commands and code as README.md, in Chinese words (issue 28) ------

README_ZH = README.with_name("README.zh.md")
ZH_ONLY = ("## 中文版",)  # README.zh.md's sections with no English counterpart: the Chinese edition itself
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")  # a link's text is read; its target is not prose
CODE = re.compile(r"`[^`]*`")
FENCE = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")  # 2.82, 10,000, 30 (of 30/30), 86 and 64 (of x86-64)
LETTERS = re.compile(r"[A-Za-z\u4e00-\u9fff]")  # a cell with words, not only numbers


def sections(text: str) -> list[tuple[str, str]]:
    """(heading line, body) of every section, headings inside code fences aside; the top one's is ''."""
    found, heading, body, fenced = [], "", [], False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            found.append((heading, "\n".join(body)))
            heading, body = line, []
        else:
            body.append(line)
    return [*found, (heading, "\n".join(body))]


def kept(text: str) -> tuple[list[str], list[str]]:
    """What a translation keeps of some text: its `code` and its numbers (outside the code), in any order."""
    text = LINK.sub(r"\1", " ".join(text.split()))  # a `code span` may wrap onto the next line
    return sorted(CODE.findall(text)), sorted(NUMBER.findall(CODE.sub(" ", text)))


def cell_kept(cell: str) -> str | tuple[list[str], list[str]]:
    """A cell of numbers and code only is kept exactly as written; a cell with words, by ``kept``."""
    text = LINK.sub(r"\1", cell)
    return kept(text) if LETTERS.search(CODE.sub(" ", text)) else text


def section_facts(body: str) -> dict:
    """A section's code blocks, its tables (each cell as written and as kept; headers aside) and prose."""
    blocks = FENCE.findall(body)
    rest = FENCE.sub("", body)
    tables = [[[(c, cell_kept(c)) for c in row] for row in block[2:]] for block in table_blocks(rest)]
    prose = "\n".join(line for line in rest.splitlines() if not line.startswith("|"))
    return {"code blocks": blocks, "tables": tables, "prose": kept(prose)}


def paired_sections() -> list[tuple[str, dict, dict]]:
    """README.md's sections beside README.zh.md's, in order (the Chinese-only ones left out)."""
    english = sections(README.read_text(encoding="utf-8"))
    chinese = [s for s in sections(README_ZH.read_text(encoding="utf-8")) if s[0] not in ZH_ONLY]
    levels = [[h.split(" ")[0] for h, _ in part] for part in (english, chinese)]
    assert levels[0] == levels[1], (
        f"README.zh.md should have README.md's sections, in order: {[h for h, _ in english]}, "
        f"{[h for h, _ in chinese]}"
    )
    return [(h, section_facts(e), section_facts(z)) for (h, e), (_, z) in zip(english, chinese, strict=True)]


def differences(english: list[str], chinese: list[str]) -> str:
    """What one side has more of than the other, as a failure names it."""
    more, fewer = Counter(english) - Counter(chinese), Counter(chinese) - Counter(english)
    return f"README.md has more of {sorted(more.elements())}, README.zh.md of {sorted(fewer.elements())}"


def test_the_chinese_readme_gives_the_same_two_commands():
    """Every command block of README.md, byte for byte, in README.zh.md (and no other)."""
    english, chinese = (FENCE.findall(p.read_text(encoding="utf-8")) for p in (README, README_ZH))
    assert len(chinese) == len(english), (
        f"README.md has {len(english)} code blocks, README.zh.md {len(chinese)}"
    )
    for block, block_zh in zip(english, chinese, strict=True):
        assert block_zh == block, f"README.zh.md should give, as README.md does:\n{block}\nnot:\n{block_zh}"


def test_the_chinese_readme_s_tables_have_the_same_numbers():
    for heading, english, chinese in paired_sections():
        where = heading or "the top"
        assert len(chinese["tables"]) == len(english["tables"]), f"{where}: a table is missing or extra"
        for n, (table, table_zh) in enumerate(zip(english["tables"], chinese["tables"], strict=True), 1):
            shape, shape_zh = [len(r) for r in table], [len(r) for r in table_zh]
            assert shape == shape_zh, f"{where}, table {n}: cells per row {shape_zh}, README.md has {shape}"
            for row, row_zh in zip(table, table_zh, strict=True):
                for column, ((_, cell), (_, cell_zh)) in enumerate(zip(row, row_zh, strict=True), 1):
                    assert cell_zh == cell, (
                        f"{where}, table {n}, row {row[0][0]!r}, column {column}: README.zh.md keeps "
                        f"{cell_zh}, README.md has {cell}"
                    )


def test_the_chinese_readme_s_prose_has_the_same_numbers_and_code():
    for heading, english, chinese in paired_sections():
        (code, numbers), (code_zh, numbers_zh) = english["prose"], chinese["prose"]
        where = heading or "the top"
        assert numbers_zh == numbers, f"{where}: numbers {differences(numbers, numbers_zh)}"
        assert code_zh == code, f"{where}: `code` {differences(code, code_zh)}"


@pytest.mark.parametrize("readme", [README, README_ZH], ids=["README.md", "README.zh.md"])
def test_the_terms_name_what_the_code_has(readme):
    """The glossary's last column names modules, functions, classes and fields the package has."""
    (body,) = [b for h, b in sections(readme.read_text(encoding="utf-8")) if "术语" in h]
    (table,) = table_blocks(body)
    names = [name.strip("`") for row in table[2:] for name in CODE.findall(row[-1])]
    assert len(names) >= 20, names
    for name in names:
        module, *attributes = name.split(".")
        found = import_module(f"ralph_mini.{module}")
        for attribute in attributes:
            known = {f.name for f in fields(found)} if is_dataclass(found) else set()
            assert hasattr(found, attribute) or attribute in known, f"{readme.name}'s terms: no {name}"
            found = getattr(found, attribute, None)


def test_the_readmes_link_to_files_that_exist():
    """Every file a README links to exists; the Chinese lesson table's links open the Chinese notebooks."""
    for readme in (README, README_ZH):
        links = LINK.findall(readme.read_text(encoding="utf-8"))
        missing = sorted({t for _, t in links if "://" not in t and not (readme.parent / t).exists()})
        assert not missing, f"{readme.name} links to files that do not exist (yet?): {missing}"
    for text, target in LINK.findall(README_ZH.read_text(encoding="utf-8")):
        if text.startswith("`") and text.endswith(".ipynb`"):
            assert target == f"notebooks/zh/{text.strip('`')}", f"README.zh.md: {text} links to {target}"
