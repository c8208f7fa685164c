"""How long each lesson and exercise takes in a workshop, derived from its size at stated rates: the one
source of the instructor guide's minutes (exercises/README.md) and of each exercise's "About N minutes".

What it measures, per notebook (the lessons, the five core exercises, then the build-your-own track):

- ``code cells`` and ``prose words`` (words in markdown cells, split on white space);
- ``run s``: wall seconds to execute the notebook top to bottom with nbclient, in a temporary copy of
  its folder (the committed files are never touched), offline model, on this machine;
- for exercises, ``solution lines``: non-blank, non-comment lines between ``### BEGIN SOLUTION`` and
  ``### STARTER`` / ``### END SOLUTION`` in the instructor notebook (what the student has to write). The
  capstone (``PASTED``) has none: its solution blocks are the four exercises' code, pasted.

Minutes are then derived at these rates, which are assumptions, stated so that they can be argued with:

- ``WORDS_PER_MIN``: the prose is read aloud or read along at 150 words a minute (a lecturer's pace;
  slower than silent reading, since the text is technical and read next to code);
- ``SECONDS_PER_CELL``: 30 s per code cell to run it, look at its output and say one sentence;
- ``MINUTES_PER_SOLUTION_LINE``: a first attempt at an exercise takes 0.75 minutes per line of
  reference code, spec reading and fixing what the checker rejects included, on top of reading its
  prose and running its cells. Calibrated on one observation: a first attempt at exercise 3 (31 lines)
  takes 25-35 minutes; 0.75 puts it at 31.

A shortened lesson in a plan (``PLANS``) is the sum of the ``##`` sections it keeps, at the same rates,
without run time (``--sections`` shows them). The guide holds three generated blocks (the minutes table,
the 3-hour plan, the build-track plan), between ``<!-- lesson_sizes.py: NAME -->`` and ``<!-- end
lesson_sizes.py -->``; the table's ``run s`` column is where the last measured run times are kept.

    python tools/lesson_sizes.py               # execute each notebook once and print the table
    python tools/lesson_sizes.py --no-execute  # sizes only, the run column left out
    python tools/lesson_sizes.py --sections notebooks/04_memory.ipynb  # minutes per ## section, no run
    python tools/lesson_sizes.py --write       # execute, then rewrite the guide's blocks and minute lines
    python tools/lesson_sizes.py --write --no-execute  # the same with the run times the guide keeps
    python tools/lesson_sizes.py --check       # exit 1 and say what drifted (tests/test_guide_timings.py)

The Chinese edition has its own guide (exercises/zh/README.md) and its own minutes, from its own
notebooks (``notebooks/zh/``, ``exercises/zh/``): ``--lang zh`` with any of the above. Its prose is read at
``CHARS_PER_MIN`` Chinese characters a minute, 300, the low end of the 300-500 a reader reads technical
Chinese at, as 150 words is the low end for English; the words between them (code, names, numbers) at
``WORDS_PER_MIN``. Code cells, solution lines and run time count as in English. Its plans are the same
``PLANS``, cut where the English edition's headings are (the cells of the two editions are the same);
``ZH_TEXT`` says their rows in Chinese. A Chinese notebook not built yet is sized from its English edition
(said on stderr), so the guide can be written before the translations are done.

    python tools/lesson_sizes.py --lang zh --write --no-execute   # the Chinese guide and minute lines
"""

import argparse
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat
from nbbuild import in_edition
from nbrun import ROOT, lesson_notebooks, run_copy

WORDS_PER_MIN = 150
SECONDS_PER_CELL = 30
MINUTES_PER_SOLUTION_LINE = 0.75
BEGIN, STARTER, END = "### BEGIN SOLUTION", "### STARTER", "### END SOLUTION"
GUIDE = ROOT / "exercises" / "README.md"
TRACK = ROOT / "exercises" / "build_your_own"
PASTED = ("ex10_capstone.ipynb",)  # solution blocks that are pasted from earlier exercises, not written
OPTIONAL = (  # in no plan
    "09_world_changes.ipynb",
    "10_outer_loop.ipynb",
    "11_your_own_world.ipynb",
    "12_lessons_that_bind.ipynb",
    "ex11_guard.ipynb",
)
MINUTE_LINE = re.compile(r"About \d+ minutes\.")
CHARS_PER_MIN = 300  # the Chinese edition's prose: characters a minute (see the module docstring)
GUIDES = {"en": GUIDE, "zh": ROOT / "exercises" / "zh" / "README.md"}
MINUTE_LINES = {
    "en": (MINUTE_LINE, "About {} minutes."),
    "zh": (re.compile(r"约 \d+ 分钟。"), "约 {} 分钟。"),
}
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")  # a Chinese character
BETWEEN_HAN = re.compile(r"[^\s\u3000-\u303f\uff00-\uffef\u3400-\u4dbf\u4e00-\u9fff]+")  # a word among them


@dataclass(frozen=True)
class Size:
    """One notebook's (or one section's) size and the minutes derived from it."""

    name: str
    code_cells: int
    words: int
    solution_lines: int
    run_s: float | None
    chars: int = 0  # Chinese characters of the prose (the Chinese edition; 0 in English)

    @property
    def minutes(self) -> float:
        reading = self.words / WORDS_PER_MIN * 60 + self.chars / CHARS_PER_MIN * 60
        seconds = reading + self.code_cells * SECONDS_PER_CELL + (self.run_s or 0)
        return seconds / 60 + self.solution_lines * MINUTES_PER_SOLUTION_LINE


def whole(minutes: float) -> int:
    """Minutes as the guide and the notebooks print them: rounded, halves up."""
    return int(minutes + 0.5)


def notebooks(language: str = "en") -> list[Path]:
    """The lessons, the five core exercises, then the build-your-own track, in workshop order."""
    english = lesson_notebooks() + sorted(TRACK.glob("ex[0-9][0-9]_*.ipynb"))
    return [edition(path, language) for path in english]


def edition(path: Path, language: str) -> Path:
    """The same notebook in an edition: notebooks/01_x.ipynb <-> notebooks/zh/01_x.ipynb,
    exercises/build_your_own/ex06_x.ipynb <-> exercises/zh/build_your_own/ex06_x.ipynb."""
    return in_edition(path, ROOT / path.relative_to(ROOT).parts[0], language)


def language_of(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    return "zh" if len(parts) > 2 and parts[1] == "zh" else "en"


def built(path: Path) -> Path:
    """The notebook, or for a Chinese one not built yet its English edition (said once, on stderr)."""
    if path.exists() or language_of(path) == "en":
        return path
    not_built(path)
    return edition(path, "en")


@cache
def not_built(path: Path) -> None:
    print(f"{path.relative_to(ROOT)} is not built yet: sized from its English edition", file=sys.stderr)


def instructor(path: Path) -> Path:
    """An exercise's instructor notebook: solutions/ next to the English student's (one for both)."""
    return edition(path, "en").parent / "solutions" / path.name


def prose(text: str, language: str) -> tuple[int, int]:
    """(words, Chinese characters) of a markdown cell: in English words split on white space; in Chinese
    each character, and the words between them (code, names, numbers) as words."""
    if language == "en":
        return len(re.findall(r"\S+", text)), 0
    return len(BETWEEN_HAN.findall(text)), len(HAN.findall(text))


def solution_lines(source: str) -> int:
    """Lines of reference code a student writes: inside a solution block, before its starter."""
    count, inside = 0, False
    for line in source.splitlines():
        text = line.strip()
        if text == BEGIN:
            inside = True
        elif text in (STARTER, END):
            inside = False
        elif inside and text and not text.startswith("#"):
            count += 1
    return count


def measure(path: Path, execute: bool, run_s: float | None = None) -> Size:
    """A notebook's size; ``run_s`` is used (as measured before) when not executing."""
    source = built(path)
    notebook = nbformat.read(source, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    counts = [
        prose(cell.source, language_of(source)) for cell in notebook.cells if cell.cell_type == "markdown"
    ]
    words, chars = sum(w for w, _ in counts), sum(c for _, c in counts)
    lines = 0
    if instructor(path).exists() and path.name not in PASTED:
        lines = sum(solution_lines(c.source) for c in nbformat.read(instructor(path), as_version=4).cells)
    if execute:
        try:
            run_s = run_copy(source, env={"RALPH_MODEL": "offline", "RALPH_LANG": language_of(source)})[0]
        except Exception as err:  # a notebook mid-edit: say so, keep the run time measured before
            print(
                f"{path.name} did not run ({type(err).__name__}); its run time stays {run_s}", file=sys.stderr
            )
    return Size(path.name, len(code), words, lines, run_s, chars)


def sections(path: Path) -> list[Size]:
    """The notebook cut at its ``##`` headings (what comes before the first is the opening), each part
    sized at the same rates, without run time: what a shortened walk-through keeps or leaves out. A
    Chinese notebook is cut where its English edition's headings are (the plans name those)."""
    source = built(path)
    cells, english = (nbformat.read(p, as_version=4).cells for p in (source, edition(source, "en")))
    if len(cells) != len(english):
        raise ValueError(f"{source.relative_to(ROOT)} and its English edition differ in cells: rebuild it")
    parts: list[list] = [["opening", 0, 0, 0]]
    for cell, heading_cell in zip(cells, english, strict=True):
        heading = re.search(r"^## (.+)$", heading_cell.source, re.M) if cell.cell_type == "markdown" else None
        if heading:
            parts.append([heading[1].strip(), 0, 0, 0])
        if cell.cell_type == "code":
            parts[-1][1] += 1
        else:
            words, chars = prose(cell.source, language_of(source))
            parts[-1][2] += words
            parts[-1][3] += chars
    return [Size(name, cells, words, 0, None, chars) for name, cells, words, chars in parts]


def heading_in(path: Path, name: str) -> str:
    """The ``##`` heading of a notebook's edition where its English edition's starts with ``name``."""
    source = built(path)
    cells, english = (nbformat.read(p, as_version=4).cells for p in (source, edition(source, "en")))
    for cell, heading_cell in zip(cells, english, strict=True):
        heading = re.search(r"^## (.+)$", heading_cell.source, re.M)
        if cell.cell_type == "markdown" and heading and heading[1].strip().startswith(name):
            found = re.search(r"^## (.+)$", cell.source, re.M)
            return found[1].strip() if found else name
    return name


def table(sizes: list[Size], language: str = "en") -> str:
    lines = [
        {
            "en": "| notebook | code cells | prose words | solution lines | run s | minutes |",
            "zh": "| 笔记本 | 代码单元 | 正文（字 + 词） | 答案代码行 | 运行秒数 | 分钟 |",
        }[language],
        "|---|---|---|---|---|---|",
    ]
    for s in sizes:
        run = f"{s.run_s:.0f}" if s.run_s is not None else "-"
        optional = {"en": " (optional)", "zh": "（选学）"}[language] if s.name in OPTIONAL else ""
        words = s.words if language == "en" else f"{s.chars} + {s.words}"
        lines.append(
            f"| `{s.name}`{optional} | {s.code_cells} | {words} | {s.solution_lines or '-'} | {run} "
            f"| {whole(s.minutes)} |"
        )
    return "\n".join(lines)


# --- the plans -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One row of a plan: a notebook (whole, without the ``##`` sections in ``drop``, or only the opening
    and the sections in ``keep``), or a slot of fixed ``minutes``. Sections are named by how their
    heading starts."""

    what: str
    notebook: str = ""
    minutes: int = 0
    drop: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    note: str = ""


# fmt: off
PLANS: dict[str, tuple[int, tuple[Part, ...]]] = {  # name: (the most minutes it may take, its parts)
    "3-hour plan": (180, (
        Part("welcome, setup check", minutes=10, note="everyone runs `python -m ralph_mini demo --tasks 2` "
             "and opens `exercises/ex01_tool.ipynb`"),
        Part("**01 bare ReAct**", "01_bare_react.ipynb",
             note="the loop, tools and schemas, the baseline table"),
        Part("exercise 1: a tool and the compressor", "ex01_tool.ipynb",
             note="early finishers: add a `year: int = 2025` parameter and read the schema"),
        Part("**02 execution log**", "02_execution_log.ipynb",
             note="where the time goes: wasted calls per tool"),
        Part("exercise 2: max pitfall depth", "ex02_pitfall_depth.ipynb", note="ask: why `>` and not `>=`?"),
        Part("**03 reflector**, shortened", "03_reflector.ipynb",
             drop=("The fast loop's quick review", "Apply the rules"),
             note="the template, validation and re-ask"),
        Part("exercise 3: the template validator", "ex03_template_validator.ipynb",
             note="the longest; pair people up"),
        Part("break", minutes=10),
        Part("**04 memory**, shortened", "04_memory.ipynb",
             drop=("Recent evidence outweighs old", "One lesson, one row", "Saving it"),
             note="experiences, votes, the guards, the learning curve; decay and expiry for exercise 4"),
        Part("exercise 4: decay and expiry", "ex04_decay.ipynb",
             note="boundaries: exactly 14 and exactly 30 days"),
        Part("**05 vector retrieval**, shortened", "05_vector_retrieval.ipynb",
             drop=("Speed", "What changed"),
             note="which lessons match a task; the budget"),
        Part("exercise 5: budgeted injection", "ex05_budget.ipynb",
             note="the demo shows a bigger budget doing worse"),
        Part("**06 Ralph Loop**, shortened", "06_ralph_loop.ipynb",
             drop=("One late task", "The fast loop, when it fires", "The work journal"),
             note="everything together: the benchmark, the learning curve, the ablations"),
        Part("wrap-up", minutes=2),
    )),
    "90-minute plan": (90, (
        Part("welcome, setup check", minutes=5, note="the demo runs on every machine"),
        Part("**01 bare ReAct**", "01_bare_react.ipynb", note="demo only"),
        Part("exercise 1: a tool and the compressor", "ex01_tool.ipynb"),
        Part("**03 reflector**, shortened", "03_reflector.ipynb",
             drop=("The fast loop's quick review", "Apply the rules"), note="demo only"),
        Part("exercise 3: the template validator", "ex03_template_validator.ipynb", note="pair people up"),
        Part("**06 Ralph Loop**, shortened", "06_ralph_loop.ipynb",
             drop=("One late task", "The fast loop, when it fires", "The work journal"), note="demo only"),
    )),
    "build-track plan": (180, (
        Part("welcome back: the pieces of the loop", minutes=5,
             note="open `exercises/build_your_own/ex06_react_loop.ipynb`"),
        Part("exercise 6: the ReAct loop", "ex06_react_loop.ipynb",
             note="the scripted model refuses what the API would: read its message"),
        Part("exercise 7: write and vote", "ex07_memory_vote.ipynb",
             note="ask: what would let a bad lesson in?"),
        Part("exercise 8: hybrid retrieval", "ex08_hybrid_retrieval.ipynb",
             note="the demo is notebook 05's labelled set"),
        Part("break", minutes=10),
        Part("exercise 9: the assembly", "ex09_assembly.ipynb",
             note="each message names the task that went wrong"),
        Part("exercise 10: capstone", "ex10_capstone.ipynb", note="compare curves across the room"),
        Part("**07 failures and guards**, shortened", "07_failures_and_guards.ipynb",
             keep=("7. Prompt injection",),
             note="the guard table, then prompt injection; the rest is reading for later"),
        Part("**08 real models**, shortened", "08_real_models.ipynb",
             keep=("Which backend is active", "The measured table"),
             note="switch the room to the shared server (below) for one cell"),
        Part("wrap-up", minutes=5),
    )),
}
ZH_TEXT = {  # the plans' rows in the Chinese guide
    "welcome, setup check": "欢迎，检查环境",
    "everyone runs `python -m ralph_mini demo --tasks 2` and opens `exercises/ex01_tool.ipynb`":
        "每人运行 `python -m ralph_mini demo --tasks 2`，并打开 `exercises/zh/ex01_tool.ipynb`",
    "**01 bare ReAct**": "**01 裸 ReAct**",
    "the loop, tools and schemas, the baseline table": "循环、工具与 schema、基线表格",
    "exercise 1: a tool and the compressor": "练习 1：一个工具和压缩器",
    "early finishers: add a `year: int = 2025` parameter and read the schema":
        "先做完的人：加一个 `year: int = 2025` 参数，再读一读 schema",
    "**02 execution log**": "**02 执行日志**",
    "where the time goes: wasted calls per tool": "时间花在哪里：每个工具浪费的调用",
    "exercise 2: max pitfall depth": "练习 2：最大陷阱深度",
    "ask: why `>` and not `>=`?": "提问：为什么是 `>` 而不是 `>=`？",
    "**03 reflector**, shortened": "**03 反思器**，精简版",
    "the template, validation and re-ask": "模板、校验与重新询问",
    "exercise 3: the template validator": "练习 3：模板校验器",
    "the longest; pair people up": "最长的一个练习；让大家两人一组",
    "break": "休息",
    "**04 memory**, shortened": "**04 记忆**，精简版",
    "experiences, votes, the guards, the learning curve; decay and expiry for exercise 4":
        "经验、投票、护栏、学习曲线；衰减和过期留给练习 4",
    "exercise 4: decay and expiry": "练习 4：衰减与过期",
    "boundaries: exactly 14 and exactly 30 days": "边界：恰好 14 天和恰好 30 天",
    "**05 vector retrieval**, shortened": "**05 向量检索**，精简版",
    "which lessons match a task; the budget": "哪些经验与任务匹配；预算",
    "exercise 5: budgeted injection": "练习 5：按预算注入",
    "the demo shows a bigger budget doing worse": "演示显示预算更大反而更差",
    "**06 Ralph Loop**, shortened": "**06 Ralph 循环**，精简版",
    "everything together: the benchmark, the learning curve, the ablations":
        "全部组合起来：基准测试、学习曲线、消融实验",
    "wrap-up": "总结",
    "the demo runs on every machine": "演示在每台机器上都能运行",
    "demo only": "只做演示",
    "pair people up": "让大家两人一组",
    "welcome back: the pieces of the loop": "欢迎回来：循环的各个部件",
    "open `exercises/build_your_own/ex06_react_loop.ipynb`":
        "打开 `exercises/zh/build_your_own/ex06_react_loop.ipynb`",
    "exercise 6: the ReAct loop": "练习 6：ReAct 循环",
    "the scripted model refuses what the API would: read its message":
        "脚本化模型会拒绝 API 会拒绝的请求：读它的消息",
    "exercise 7: write and vote": "练习 7：写入与投票",
    "ask: what would let a bad lesson in?": "提问：什么会让一条坏经验混进来？",
    "exercise 8: hybrid retrieval": "练习 8：混合检索",
    "the demo is notebook 05's labelled set": "演示用的是笔记本 05 的标注集",
    "exercise 9: the assembly": "练习 9：组装",
    "each message names the task that went wrong": "每条消息都会指出出错的任务",
    "exercise 10: capstone": "练习 10：综合项目",
    "compare curves across the room": "在全场比较各自的曲线",
    "**07 failures and guards**, shortened": "**07 失败与护栏**，精简版",
    "the guard table, then prompt injection; the rest is reading for later":
        "护栏表格，然后是提示词注入；其余留作课后阅读",
    "**08 real models**, shortened": "**08 真实模型**，精简版",
    "switch the room to the shared server (below) for one cell":
        "让全场在一个单元格里切换到共享服务器（见下文）",
}
# fmt: on


def said(text: str, language: str) -> str:
    """A plan's text in the guide's language."""
    if language == "en" or not text:
        return text
    if text not in ZH_TEXT:
        raise KeyError(f"no Chinese for the plan text {text!r}: add it to ZH_TEXT in {__file__}")
    return ZH_TEXT[text]


def part_size(part: Part, sizes: dict[str, Size], language: str = "en") -> float:
    """A part's minutes: fixed, the notebook's (with its run time), or its kept sections' (without)."""
    if not part.notebook:
        return part.minutes
    if not (part.drop or part.keep):
        return sizes[part.notebook].minutes
    path = next(p for p in notebooks(language) if p.name == part.notebook)
    found = sections(path)
    for name in (*part.drop, *part.keep):
        if not any(s.name.startswith(name) for s in found):
            raise ValueError(f"{part.notebook} has no section starting {name!r}: update PLANS in {__file__}")

    def listed(section: Size, names: tuple[str, ...]) -> bool:
        return any(section.name.startswith(name) for name in names)

    kept = [
        s
        for s in found
        if not listed(s, part.drop) and (not part.keep or s.name == "opening" or listed(s, part.keep))
    ]
    return sum(s.minutes for s in kept)


def plan_table(parts: tuple[Part, ...], sizes: dict[str, Size], language: str = "en") -> tuple[str, int]:
    """The plan as a markdown table with start times, and its total minutes."""
    header = {"en": "| start | min | what | notes |", "zh": "| 开始 | 分钟 | 内容 | 备注 |"}[language]
    lines, start = [header, "|---|---|---|---|"], 0
    for part in parts:
        minutes = whole(part_size(part, sizes, language))
        what = said(part.what, language)
        path = next((p for p in notebooks(language) if p.name == part.notebook), None)
        names = {kind: [heading_in(path, n) for n in names] if language != "en" else list(names)
                 for kind, names in (("drop", part.drop), ("keep", part.keep))}  # fmt: skip
        if language == "en":
            what += ", without " + " and ".join(f'"{n}"' for n in names["drop"]) if part.drop else ""
            what += ": the opening and " + " and ".join(f'"{n}"' for n in names["keep"]) if part.keep else ""
        else:
            what += "，不含" + "和".join(f"“{n}”" for n in names["drop"]) if part.drop else ""
            what += "：开头部分和" + "和".join(f"“{n}”" for n in names["keep"]) if part.keep else ""
        lines.append(f"| {start // 60}:{start % 60:02d} | {minutes} | {what} | {said(part.note, language)} |")
        start += minutes
    return "\n".join(lines), start


def totals(sizes: list[Size], language: str = "en") -> str:
    """The sums a reader plans with, at full length."""
    groups = {
        ("lessons 01-06", "第 01-06 课"): lambda n: n[:2] in ("01", "02", "03", "04", "05", "06"),
        ("07 and 08", "07 和 08"): lambda n: n[:2] in ("07", "08"),
        ("the optional 09-12 and exercise 11", "选学的 09-12 和练习 11"): lambda n: n in OPTIONAL,
        ("the five core exercises", "五个核心练习"): lambda n: n.startswith("ex0") and n[3] in "12345",
        ("the build track's five", "构建路线的五个练习"):
            lambda n: n.startswith(("ex06", "ex07", "ex08", "ex09", "ex10")),
    }  # fmt: skip
    sums = [
        f"{labels[language == 'zh']} {whole(sum(s.minutes for s in sizes if test(s.name)))}"
        for labels, test in groups.items()
    ]
    everything = whole(sum(s.minutes for s in sizes))
    if language == "zh":
        return (
            f"完整进行时：{'，'.join(sums[:3])} 分钟；{'，'.join(sums[3:])} 分钟。全部依次进行："
            f"{everything} 分钟，即 {everything // 60} 小时 {everything % 60:02d} 分。"
        )
    return (
        f"At full length: {', '.join(sums[:3])} minutes; {' and '.join(sums[3:])}. Everything, one after "
        f"the other: {everything} minutes, {everything // 60} h {everything % 60:02d}."
    )


def blocks(sizes: list[Size], language: str = "en") -> dict[str, str]:
    """Every generated block of the guide, by name."""
    by_name = {s.name: s for s in sizes}
    found = {"minutes table": table(sizes, language) + "\n\n" + totals(sizes, language)}
    for name, (limit, parts) in PLANS.items():
        rows, total = plan_table(parts, by_name, language)
        end = {
            "en": f"In all {total} minutes, of the {limit} the plan has.",
            "zh": f"合计 {total} 分钟，本计划共 {limit} 分钟。",
        }
        found[name] = f"{rows}\n\n{end[language]}"
    return found


def block_re(name: str) -> re.Pattern:
    """A generated block: its begin marker line, its lines, its end marker."""
    return re.compile(
        rf"(<!-- lesson_sizes.py: {re.escape(name)} -->\n)(.*?)(<!-- end lesson_sizes.py -->)", re.S
    )


def guide_run_seconds(text: str) -> dict[str, float | None]:
    """The run times the guide's minutes table keeps: {notebook: seconds or None}."""
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`") and cells[0].count("`") == 2:
            found[cells[0].split("`")[1]] = None if cells[4] == "-" else float(cells[4])
    return found


def sizes_from_guide(text: str, language: str = "en") -> list[Size]:
    """Every notebook's size now, with the run time the guide keeps for it (None if it keeps none)."""
    runs = guide_run_seconds(text)
    return [measure(path, execute=False, run_s=runs.get(path.name)) for path in notebooks(language)]


def minutes_cells(text: str, sizes: list[Size], fix: bool = False) -> list[tuple[str, int]] | str:
    """Rows of the guide's other tables (a header with a 'minutes' column, a first cell naming a notebook)
    whose minutes disagree with the sizes, as (line, minutes); with ``fix``, the text with them fixed."""
    want = {s.name: whole(s.minutes) for s in sizes}
    wrong, lines, column = [], text.splitlines(keepends=True), None
    for number, line in enumerate(lines):
        cells = line.strip().strip("|").split("|") if line.startswith("|") else None
        if cells is None:
            column = None
        elif column is None:
            column = next((i for i, c in enumerate(cells) if "minutes" in c or "分钟" in c), -1)
        elif column >= 0 and (name := re.search(r"`([^`]+\.ipynb)`", cells[0])) and name[1] in want:
            if cells[column].strip() != str(want[name[1]]):
                wrong.append((line, want[name[1]]))
                cells[column] = f" {want[name[1]]} "
                lines[number] = "|" + "|".join(cells) + "|\n"
    return "".join(lines) if fix else wrong


def minute_lines(sizes: list[Size], language: str = "en") -> dict[Path, int]:
    """Each exercise notebook, student and instructor version, and the minutes its first cell must say
    (an instructor notebook says both editions', each in its language)."""
    found = {}
    for size in sizes:
        path = next(p for p in notebooks(language) if p.name == size.name)
        if instructor(path).exists() and path.exists():
            found[path] = found[instructor(path)] = whole(size.minutes)
    return found


def drift(text: str, sizes: list[Size], language: str = "en") -> list[str]:
    """What in the guide and the notebooks disagrees with the sizes: [] when nothing."""
    problems, (minute_line, says) = [], MINUTE_LINES[language]
    for name, body in blocks(sizes, language).items():
        match = block_re(name).search(text)
        if match is None:
            problems.append(f"the guide has no block '<!-- lesson_sizes.py: {name} -->'")
        elif match[2] != body + "\n":
            have, want = match[2].splitlines(), body.splitlines()
            first = next(i for i in range(max(len(have), len(want))) if have[i : i + 1] != want[i : i + 1])
            said, wanted = (
                have[first] if first < len(have) else "(nothing)",
                want[first] if first < len(want) else "(nothing)",
            )
            problems.append(f"the guide's {name} says {said!r} where the sizes give {wanted!r}")
    for path, minutes in minute_lines(sizes, language).items():
        first = nbformat.read(path, as_version=4).cells[0].source
        found = minute_line.search(first)
        if found is None or found[0] != says.format(minutes):
            what = repr(found[0]) if found else "no minutes"
            problems.append(f"{path.relative_to(ROOT)} says {what}, not '{says.format(minutes)}'")
    for name, (limit, parts) in PLANS.items():
        total = plan_table(parts, {s.name: s for s in sizes}, language)[1]
        if total > limit:
            problems.append(f"the {name} takes {total} minutes, more than {limit}: shorten a part in PLANS")
    for line, want in minutes_cells(text, sizes):
        problems.append(f"the guide's row {line.strip()!r} should say {want} minutes")
    return problems


def write(sizes: list[Size], language: str = "en") -> None:
    """Rewrite the guide's blocks and every exercise's minute line from ``sizes``."""
    guide, (minute_line, says) = GUIDES[language], MINUTE_LINES[language]
    text = guide.read_text(encoding="utf-8")
    for name, body in blocks(sizes, language).items():
        if not block_re(name).search(text):
            raise SystemExit(f"{guide} has no block '<!-- lesson_sizes.py: {name} -->': add its two markers")
        text = block_re(name).sub(lambda m, body=body: m[1] + body + "\n" + m[3], text)
    guide.write_text(minutes_cells(text, sizes, fix=True), encoding="utf-8")
    for path, minutes in minute_lines(sizes, language).items():
        notebook = nbformat.read(path, as_version=4)
        notebook.cells[0].source = minute_line.sub(says.format(minutes), notebook.cells[0].source)
        nbformat.write(notebook, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-execute", action="store_true", help="sizes only (with --write: keep the guide's run times)"
    )
    parser.add_argument("--sections", type=Path, help="one notebook's minutes per ## section")
    parser.add_argument(
        "--write", action="store_true", help="rewrite the guide's blocks and the minute lines"
    )
    parser.add_argument("--check", action="store_true", help="say what drifted, exit 1 if anything did")
    parser.add_argument("--lang", choices=sorted(GUIDES), default="en", help="the edition (default: en)")
    args = parser.parse_args(argv)
    if args.sections:
        shown = table(sections(args.sections.resolve()), language_of(args.sections.resolve()))
        print(shown.replace("| notebook |", "| section |").replace("| 笔记本 |", "| 小节 |"))
        return 0
    guide = GUIDES[args.lang].read_text(encoding="utf-8")
    if args.check:
        problems = drift(guide, sizes_from_guide(guide, args.lang), args.lang)
        print("\n".join(problems) or "the guide and the exercises agree with the sizes")
        return 1 if problems else 0
    runs = guide_run_seconds(guide) if args.write else {}
    sizes = []
    for path in notebooks(args.lang):
        sizes.append(measure(path, execute=not args.no_execute, run_s=runs.get(path.name)))
        print(f"measured {path.name}", file=sys.stderr)
    if args.write:
        write(sizes, args.lang)
        print(f"wrote {GUIDES[args.lang].relative_to(ROOT)} and the exercises' minute lines", file=sys.stderr)
    print(table(sizes, args.lang))
    chars = f"{CHARS_PER_MIN} Chinese characters/min and " if args.lang == "zh" else ""
    print(
        f"\nrates: {chars}{WORDS_PER_MIN} words/min, {SECONDS_PER_CELL} s per code cell, "
        f"{MINUTES_PER_SOLUTION_LINE:g} min per solution line, plus the run time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
