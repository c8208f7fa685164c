"""The instance filter on its labelled sets: precision, recall and speed, before and after issue 16 and
before and after names and ids in any casing, and on the held-out set of five made-up worlds.

    python benchmarks/instance_filter.py                # the table, and what the new filter gets wrong
    python benchmarks/instance_filter.py --misses       # also what the old filters get wrong
    python benchmarks/instance_filter.py --set heldout  # held-out set: overall, per kind/style/world, misses,
                                                        # microseconds per call, before and after

"issue 16: memory" and "issue 16: reflector" are frozen copies of the two filters the kit had until
issue 16: memory's pattern list (order id, customer, transaction, amount, date) and the reflector's
(order id or customer only). "before: both" is a frozen copy of the shared filter as it was before names
and ids in any casing or joining style (``before_details`` below). "after: both" is today's
``lesson_guards.instance_details``, which memory and the reflector share.

The held-out set (``data/instance_labels_heldout.json``) was written by hand before the filter was
changed for names and ids in any casing or joining style (alice_chen, inc-20931, ticketId4471, usr7731).
Each row names the world it comes from; that world's tools, statuses, fields and record noun go in as
``known_words`` and its id formats as ``id_patterns``, the way a world-agnostic caller would pass them.
Its loader lives here, not in the package, so that measuring it changes no package module.
"""

import argparse
import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from importlib import resources

from ralph_mini.lesson_guards import instance_details, load_instance_labels, precision_recall
from ralph_mini.worlds import orders

OLD_MEMORY_PATTERNS = (  # order_words.INSTANCE_PATTERNS before issue 16
    r"\b[A-Z]\d{3}\b",
    r"\bCUST-\d+\b",
    r"\bTXN-\d+\b",
    r"\b\d+\.\d+\b",
    r"\b\d{4}-\d\d-\d\d\b",
)
OLD_REFLECT_RE = re.compile(r"\b[A-Z]\d{3}\b|\bCUST-\d+\b")  # reflect.INSTANCE_RE before issue 16


# --- "before": a frozen copy of lesson_guards.instance_details as it was before names and ids in any
# casing (snake_case, kebab-case, camelCase, digits), so that one command prints the before/after figures.
# Do not edit: it is the baseline, not the filter.
# --- building blocks (frozen) ------------------------------------------------------------------------------
# "Not inside a longer word": ASCII letters, digits and '_' only. Not \b, which treats Chinese as
# letters too, so that '订单A123' would hide 'A123'.
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 1,299.00 | 215 | 12.5
_CODES = r"USD|EUR|GBP|CNY|RMB|JPY|CAD|AUD|CHF|HKD|INR"
_MONEY_WORDS = rf"{_CODES}|dollars?|euros?|pounds?|yuan|cents?"
# A number followed by one of these is a duration, a count or a threshold, never an amount or an id.
_UNITS = r"ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|weeks?|x|k|%|st|nd|rd|th|秒|分钟|小时|天"
_NOT_UNIT = rf"(?!\s?(?i:{_UNITS})(?![A-Za-z]))"
_MONTHS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_NAME_WORD = r"[A-Z][a-z]*(?:['’-][A-Z][a-z]+)+|[A-Z][a-z]+"  # Maria, O'Brien, Jean-Luc
_HAN_SURNAMES = (  # common surnames that are not also everyday words (高 high, 周 week, 于 at are left out)
    "王李张刘陈杨黄赵吴徐孙马朱胡郭林罗郑梁谢宋唐许韩冯邓曹彭曾肖董袁潘蒋蔡杜叶苏魏吕丁沈姚卢姜崔钟谭陆"
    "汪范廖贾夏韦邹孟熊秦邱薛闫段雷侯龙陶黎贺顾毛郝龚邵钱严覃戴莫孔汤"
)
_ID_NOUNS = r"customer|client|user|account|invoice|case|request|shipment|sku|id"  # plus the world's noun
_KEYED = r"(?:\s(?:id\s|no\.?\s?|number\s)?|\s?#\s?)"  # 'order 10023', 'order no. 5531', 'order #12'
_TOKEN_WITH_DIGIT = r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]"  # 2+ chars: 10023, Q7

# A snake_case word in a TOOL slot of the rule grammar ('skip tool_w_100', 'query_v2 finds nothing') is a
# tool name, never an instance: the vocabulary guard (``foreign_names``) judges tool names.
_SNAKE = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
_TOOL_SLOT = rf"(?i:{_B}(?:skip|call|start with)\s({_SNAKE}){_E}|{_B}({_SNAKE})(?=\sfinds\s))"

# Common English words, and the words of the rule grammar and the reflection template: a capitalised
# one starts a sentence or a heading ("Skip ...", "Effective Steps"), it is not a name.
_BEFORE_COMMON_WORDS = frozenset(
    """a an the this that these those it its i we you he she they our your their my his her me us them
    when if then than and or but not no yes any all each every some none only also always never just
    do does did is are was were be been has have had can could should would will must may might
    skip call start answer use ask check wait try avoid retry stop keep read write send make give get
    in on at to from by for with without after before about of over under above below into per via
    first last next new old same other more less most least many much few good bad fast slow
    what which who how why where here there note final effective ineffective reusable rule rules
    step steps lesson lessons tool tools customer customers status task tasks field fields
    finds nothing age min record records
    item items run runs api json http agent model memory cache database payment date time""".split()
)


# --- checks on a match that a regular expression cannot say simply -------------------------------
def _digits_of_a_phone(match: re.Match, known: Collection[str]) -> str | None:
    """A phone number has 7 to 15 digits; fewer is a count or a duration ('30 20')."""
    return match[0] if 7 <= sum(c.isdigit() for c in match[0]) <= 15 else None


def _money_not_threshold(match: re.Match, known: Collection[str]) -> str | None:
    """'99.5' is an amount, but not after a comparison or a version word ('above 0.8', 'python 3.11')."""
    before = match.string[: match.start()].split()
    threshold_words = {"under", "over", "above", "below", "than", "least", "most", "threshold", "to"}
    version_words = {"version", "python", "v", "release", "model"}
    metric_words = {"confidence", "similarity", "score", "weight", "ratio", "rate", "factor"}
    last = before[-1].lower().strip(":=") if before else ""
    chinese = tuple(
        "率 阈值 超过 低于 高于 不足 大于 小于 至少 最多".split()
    )  # Chinese has no spaces: a suffix
    if last in threshold_words | version_words | metric_words or last.rstrip("为").endswith(chinese):
        return None
    return match[0]


# utf-8, sha256, gpt-4o, v2, and percentiles (p95)
_VERSION_PIECE = re.compile(r"[a-z]+|\d{1,2}[a-z]?|[a-z]{3,}\d{1,3}|v\d+|p\d\d")
_UNIT_TOKEN = re.compile(rf"\d+(?:\.\d+)?(?:{_UNITS})", re.I)  # 24h, 0.05s, 2nd, 3x


def _code_not_word(match: re.Match, known: Collection[str]) -> str | None:
    """A token with letters and digits is an id (X9F2, a123, ord_8f3k2), unless it is a known word, a
    number with a unit (24h), or lower-case words with small numbers (utf-8, sha256, gpt-4o-mini)."""
    token = match[0]
    if len(token) < 3 or not (re.search(r"\d", token) and re.search(r"[A-Za-z]", token)):
        return None
    if token.lower() in known or _UNIT_TOKEN.fullmatch(token):
        return None
    return None if all(_VERSION_PIECE.fullmatch(p) for p in re.split(r"[-_.]", token)) else token


def _uncommon_words(match: re.Match, known: Collection[str]) -> str | None:
    """The longest run of two or more capitalised words that are not common words: 'When Maria Lopez
    asked' -> 'Maria Lopez'; 'Effective Steps' -> None."""
    runs, run = [], []
    for word in match[0].split():
        run = [] if word.lower() in known else [*run, word]
        runs.append(run)
    best = max(runs, key=len)
    return " ".join(best) if len(best) >= 2 else None


def _uncommon_name(match: re.Match, known: Collection[str]) -> str | None:
    """'customer Chen' -> 'Chen'; 'customer Status' -> None."""
    name = next(group for group in match.groups() if group)
    return None if name.lower() in known else name


_BeforeCheck = Callable[[re.Match, Collection[str]], str | None]

# --- the patterns, in order: an earlier match claims its characters -------------------------------
# (kind, pattern, check); without a check, the match (or its first group) is the detail. The shapes that
# say their kind come first, then the world's own id formats, then the generic guesses.
_BEFORE_SHAPED: tuple[tuple[str, str, _BeforeCheck | None], ...] = (
    # a link or an e-mail address names one page or one person
    ("link", r"https?://\S+|www\.\S+", None),
    ("email", rf"{_B}[\w.+-]+@[\w-]+(?:\.[\w-]+)+", None),
    # a date: 2025-03-10 (T11:48), 03/10/2025, March 10, 10 March 2025, 2025年3月10日
    (
        "date",
        rf"{_B}(?:\d{{4}}-\d\d?-\d\d?(?:[T ]\d\d?:\d\d(?::\d\d)?)?|\d\d?/\d\d?/\d{{2,4}}|\d{{4}}/\d\d?/\d\d?"
        rf"|{_MONTHS} \d\d?(?:st|nd|rd|th)?(?:,? \d{{4}})?|\d\d? {_MONTHS}(?: \d{{4}})?){_E}"
        r"|(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]",
        None,
    ),
    # a time of day: 11:48, 09:30:15, 7:05am, 3 pm, 下午3点, 11点48分 ('3:1' is a ratio: no 2-digit minutes)
    (
        "time",
        rf"{_B}\d\d?:\d\d(?::\d\d)?(?:\s?[AaPp]\.?[Mm]\.?)?{_E}|{_B}\d\d?\s?[AaPp]\.?[Mm]\.?(?![A-Za-z])"
        r"|(?:上午|下午|晚上|凌晨|早上|中午)\d{1,2}点(?:\d{1,2}分|半)?|\d{1,2}点\d{1,2}分",
        None,
    ),
    # an amount with its currency: $215, € 89.90, 42,50 €, USD 12.5, 45 EUR, 120 dollars, 金额为215元
    (
        "amount",
        rf"[$€£¥￥₹]\s?(?:{_NUM}){_E}|{_B}(?:{_CODES})\s?(?:{_NUM}){_E}|{_B}(?:{_NUM})\s?(?:{_MONEY_WORDS}){_E}"
        rf"|{_B}(?:{_NUM}|\d+,\d\d)\s?[$€£¥￥₹]"
        rf"|(?:(?:人民币|金额为?)\s?)?(?:{_NUM})\s?(?:元|块|美元|欧元|英镑)|(?:人民币|金额为?)\s?(?:{_NUM})"
        rf"|(?i:{_B}(?:amount|total|price)\s(?:is\s|was\s|of\s)?)(\d+(?:\.\d+)?)(?![\d.A-Za-z_]){_NOT_UNIT}",
        None,
    ),
    # a number or code after a noun that names one thing: Transaction 88231, order no. 5531, 订单号10023
    (
        "transaction",
        rf"(?i:{_B}(?:transaction|txn){_KEYED})({_TOKEN_WITH_DIGIT}){_E}{_NOT_UNIT}"
        r"|(?:交易号?|流水号)\s?([A-Za-z0-9-]*\d[A-Za-z0-9-]*)",
        None,
    ),
    (
        "id",
        rf"(?i:{_B}(?:{_ID_NOUNS}){_KEYED})({_TOKEN_WITH_DIGIT}){_E}{_NOT_UNIT}"
        r"|(?:订单号?|单号|编号|客户号)\s?([A-Za-z0-9-]*\d[A-Za-z0-9-]*)",
        None,
    ),
    # a phone number: +1 415-555-0132, 1-800-555-0199, (415) 555-0132, 020 7946 0958, 13800138000
    (
        "phone",
        r"(?<![A-Za-z0-9_.-])(?:\+?\d{1,3}[\s.-])?(?:\(\d{2,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){1,4}"
        rf"(?![A-Za-z0-9_]){_NOT_UNIT}",
        _digits_of_a_phone,
    ),
)
_BEFORE_GENERIC: tuple[tuple[str, str, _BeforeCheck | None], ...] = (
    # '#10023', and a number of 5 or more digits that is not round (100000 lessons is a count)
    ("id", rf"#\s?\d+|{_B}(?!\d+000{_E})\d{{5,}}{_E}{_NOT_UNIT}", None),
    # a decimal with no unit and no comparison before it is an amount: 'the total is 99.50'
    ("amount", rf"(?<![A-Za-z0-9_.,])\d+\.\d+(?![\d.]){_NOT_UNIT}", _money_not_threshold),
    # a token mixing letters and digits: X9F2, a123, ord_8f3k2, INV-2024-0042, 7f3a9c2e
    ("id", rf"{_B}[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*{_E}", _code_not_word),
    # a name: a title or a role noun before a capitalised word (Mr. Tanaka, customer Chen), then two or
    # more capitalised uncommon words in a row (Maria Lopez), then Chinese: 王女士, 客户张伟
    (
        "name",
        rf"(?:Mr|Mrs|Ms|Mx|Dr|Prof)\.?\s({_NAME_WORD})"
        rf"|(?i:{_B}(?:customer|client|buyer|shopper|user|named|called)\s)({_NAME_WORD})(?![\w'’-])",
        _uncommon_name,
    ),
    ("name", rf"(?<![\w'’-])(?:{_NAME_WORD})(?:\s+(?:{_NAME_WORD}))+(?![\w'’-])", _uncommon_words),
    (
        "name",
        rf"[{_HAN_SURNAMES}](?:先生|女士|小姐|太太)|(?<=客户|顾客|用户|买家)[{_HAN_SURNAMES}][\u4e00-\u9fff]",
        None,
    ),
)


def before_details(
    text: str,
    known_words: Iterable[str] = (),
    id_patterns: Mapping[str, str] | None = None,
    nouns: Iterable[str] = (),
) -> list[str]:
    r"""What in ``text`` names one instance, in text order: with the order desk's id format
    {'order id': r'\b[A-Z]\d{3}\b'}, 'skip query_database for A123' -> ['order id A123'];
    'when status is pending and age under 30 min: answer' -> [].

    ``known_words`` (the world's tools, statuses and fields) are never names or ids; ``id_patterns``
    are the world's own id formats, tried before the generic ones so that their kind is named;
    ``nouns`` (the world's record noun) key an id as 'customer' does: 'ticket 4471'.
    """
    known_words = list(known_words)
    known = _BEFORE_COMMON_WORDS | {p.lower() for w in known_words for p in re.split(r"[\s_]+", w) if p}
    known |= {w.lower() for w in known_words}
    world = tuple((kind, pattern, None) for kind, pattern in (id_patterns or {}).items())
    keyed = "|".join(re.escape(noun) for noun in nouns)
    if keyed:
        world += (("id", rf"(?i:{_B}(?:{keyed}){_KEYED})({_TOKEN_WITH_DIGIT}){_E}{_NOT_UNIT}", None),)
    ordered = _BEFORE_SHAPED + world + _BEFORE_GENERIC
    claimed = [False] * len(text)
    code_names = [rf"(?i:{_B}{re.escape(w)}{_E})" for w in known_words if re.search(r"[_\d]", w)]
    for pattern in (_TOOL_SLOT, *code_names):  # tool names and the world's code names claim their characters
        for match in re.finditer(pattern, text):
            span = match.span(match.lastindex or 0)
            claimed[span[0] : span[1]] = [True] * (span[1] - span[0])
    found: list[tuple[int, str]] = []
    for kind, pattern, check in ordered:
        for match in re.finditer(pattern, text):
            if any(claimed[match.start() : match.end()]):
                continue
            detail = check(match, known) if check else next((g for g in match.groups() if g), match[0])
            if detail:
                claimed[match.start() : match.end()] = [True] * (match.end() - match.start())
                found.append((match.start(), f"{kind} {detail.strip()}"))
    return [detail for _, detail in sorted(found)]


def order_desk_details(text: str) -> list[str]:
    """The shared filter as the order desk's loop calls it: with its tools, words, id formats and noun."""
    known = [*(t.name for t in orders.make_suite(n=1).world.tools()), *orders.WORDS.vocabulary()]
    return instance_details(text, known, orders.WORDS.id_formats, nouns=(orders.WORDS.noun,))


def order_desk_before(text: str) -> list[str]:
    """The frozen filter before names and ids in any casing, called as the order desk's loop calls it."""
    known = [*(t.name for t in orders.make_suite(n=1).world.tools()), *orders.WORDS.vocabulary()]
    return before_details(text, known, orders.WORDS.id_formats, nouns=(orders.WORDS.noun,))


FILTERS = {
    "issue 16: memory": lambda text: [m for p in OLD_MEMORY_PATTERNS for m in re.findall(p, text)],
    "issue 16: reflector": OLD_REFLECT_RE.search,
    "before: both": order_desk_before,
    "after: both": order_desk_details,
}
HEADER = f"{'filter':<20}{'precision':>10}{'recall':>8}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}"


def score_line(name: str, s: dict) -> str:
    counts = f"{s['tp']:>5}{s['fp']:>5}{s['fn']:>5}{s['tn']:>5}"
    return f"{name:<20}{s['precision']:>10.2f}{s['recall']:>8.2f}{counts}"


def load_heldout_labels() -> dict:
    """The held-out set: {'about', 'vocabularies': {name: {'known_words', 'id_patterns'}}, 'rows': [{'text',
    'expected': 'instance' | 'not', 'kind', 'style', 'vocabulary'}]}."""
    path = resources.files("ralph_mini").joinpath("data/instance_labels_heldout.json")
    return json.loads(path.read_text("utf-8"))


def heldout_calls(labels: dict) -> list[tuple[str, dict]]:
    """Each row's text and what its world gives the filter: known_words, id_patterns, nouns."""
    vocabularies = labels["vocabularies"]
    return [
        (
            row["text"],
            {
                "known_words": vocabularies[row["vocabulary"]]["known_words"],
                "id_patterns": vocabularies[row["vocabulary"]]["id_patterns"],
                "nouns": vocabularies[row["vocabulary"]].get("nouns", ()),
            },
        )
        for row in labels["rows"]
    ]


def heldout_details(
    labels: dict, details: Callable[..., list[str]] = instance_details
) -> dict[str, list[str]]:
    """What ``details`` (today's filter unless told) finds in each row's text, given that row's world:
    'when ticket_db finds HD-10452: answer' (helpdesk) -> ['ticket id HD-10452']; a negative -> []."""
    return {text: details(text, **world) for text, world in heldout_calls(labels)}


def microseconds_per_call(labels: dict, details: Callable[..., list[str]], passes: int = 5) -> float:
    """The filter's speed on the held-out set: the best of ``passes`` timed passes over every row, after one
    untimed pass (which loads the word lists and compiles each world's patterns once)."""
    calls = heldout_calls(labels)
    for text, world in calls:
        details(text, **world)
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for text, world in calls:
            details(text, **world)
        best = min(best, (time.perf_counter() - start) / len(calls))
    return best * 1e6


def heldout_scores(labels: dict | None = None, details: Callable[..., list[str]] = instance_details) -> dict:
    """Overall, per-kind, per-style and per-world scores of a filter (today's unless told) on the held-out
    set, and its misses: {'overall': scores, 'kind': {kind: scores}, 'style': ..., 'vocabulary': ...,
    'misses': rows}."""
    labels = labels or load_heldout_labels()
    found = heldout_details(labels, details)
    flags = found.__getitem__  # texts are unique in the set, so the text keys the row's verdict
    rows = labels["rows"]
    result: dict = {"overall": precision_recall(flags, rows)}
    for key in ("kind", "style", "vocabulary"):
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            groups[row[key]].append(row)
        result[key] = {name: group_counts(flags, group) for name, group in sorted(groups.items())}
    result["misses"] = [
        {**row, "found": found[row["text"]]}
        for row in rows
        if bool(found[row["text"]]) != (row["expected"] == "instance")
    ]
    return result


def group_counts(flags, rows: list[dict]) -> dict:
    """``precision_recall`` for a group that may hold one class only: a rate with nothing to divide by is
    None ('tool' rows are all negatives, so their recall is undefined; their FP count is what matters)."""
    tp = sum(bool(flags(r["text"])) for r in rows if r["expected"] == "instance")
    fp = sum(bool(flags(r["text"])) for r in rows if r["expected"] != "instance")
    positives = sum(r["expected"] == "instance" for r in rows)
    fn, tn = positives - tp, len(rows) - positives - fp
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / positives if positives else None,
    }


def group_line(name: str, s: dict, before: dict | None = None) -> str:
    """One row of a breakdown, and the "before" filter's two rates after it; an undefined rate is '-'."""

    def rate(value: float | None, width: int) -> str:
        return f"{'-':>{width}}" if value is None else f"{value:>{width}.2f}"

    counts = f"{s['tp']:>5}{s['fp']:>5}{s['fn']:>5}{s['tn']:>5}"
    line = f"{name:<20}{rate(s['precision'], 10)}{rate(s['recall'], 8)}{counts}"
    return line + (f"{rate(before['precision'], 12)}{rate(before['recall'], 8)}" if before else "")


def main_heldout(show_old_misses: bool = False) -> None:
    labels = load_heldout_labels()
    rows = labels["rows"]
    classes = Counter(row["expected"] for row in rows)
    print(
        f"held-out set: {len(rows)} labelled candidates from {len(labels['vocabularies'])} worlds: "
        f"{classes['instance']} instances, {classes['not']} hard negatives"
    )
    scores = {"before: both": heldout_scores(labels, before_details), "after: both": heldout_scores(labels)}
    print(HEADER)
    for name, score in scores.items():
        print(score_line(name, score["overall"]))
    before, after = scores["before: both"], scores["after: both"]
    for key in ("kind", "style", "vocabulary"):
        print(f"\nper {key}: after, then before's precision and recall")
        print(HEADER.replace("filter", key, 1) + f"{'precision':>12}{'recall':>8}")
        for name, s in after[key].items():
            print(group_line(name, s, before[key][name]))
    speed = {
        name: microseconds_per_call(labels, f)
        for name, f in (("before", before_details), ("after", instance_details))
    }
    print(f"\nspeed: before {speed['before']:.0f} µs per call, after {speed['after']:.0f} µs per call")
    for name in list(scores) if show_old_misses else ["after: both"]:
        misses = scores[name]["misses"]
        print(f"\n{name}: {len(misses)} wrong" + (":" if misses else ""))
        for row in sorted(misses, key=lambda r: (r["expected"], r["kind"], r["style"])):
            print(
                f"  {row['expected']:<9} {row['kind']:<9} {row['style']:<7} {row['text']}  -> {row['found']}"
            )


def main_labels(show_old_misses: bool) -> None:
    rows = load_instance_labels()
    kinds = Counter(row["expected"] for row in rows)
    print(f"{len(rows)} labelled candidates: {kinds['instance']} instances, {kinds['not']} hard negatives")
    print(HEADER)
    for name, flags in FILTERS.items():
        print(score_line(name, precision_recall(flags, rows)))
    names = list(FILTERS) if show_old_misses else ["after: both"]
    for name in names:
        wrong = [r for r in rows if bool(FILTERS[name](r["text"])) != (r["expected"] == "instance")]
        print(f"\n{name}: {len(wrong)} wrong" + (":" if wrong else ""))
        for row in wrong:
            print(f"  {row['expected']:<9} {row['kind']:<11} {row['text']}  -> {FILTERS[name](row['text'])}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The instance filter's precision and recall.")
    parser.add_argument(
        "--set",
        choices=("labels", "heldout"),
        default="labels",
        help="labels: data/instance_labels.json, old filters vs new (default); "
        "heldout: data/instance_labels_heldout.json, five worlds, per kind and style, every miss",
    )
    parser.add_argument("--misses", action="store_true", help="also what the old filters get wrong")
    args = parser.parse_args(argv)
    if args.set == "heldout":
        main_heldout(args.misses)
    else:
        main_labels(args.misses)


if __name__ == "__main__":
    main()
