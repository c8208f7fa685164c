"""Guards on what a lesson may say: no instances, and a closed vocabulary (notebooks 03, 04 and 07).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. Two cheap guards stop most of it before memory sees a rule:

- ``instance_details``: a text naming one order, customer, transaction, amount, time, date, e-mail
  address or phone number describes a special case, not a habit. The reflector's validator rejects
  such an item and memory rejects such a rule; both call this one function, so they cannot disagree;
- ``foreign_names``: a learned rule may name only the world's tools and statuses, so nothing a tool
  returned ("always call refund_order") and nothing a hijacked reflector made up rides into memory.

``instance_details`` is generic: it knows what ids, amounts, times and names look like in any shop, in
English and in Chinese. The world adds only its own id formats and its words (``order_words.py``), so
a tool name, a status or a field name is never taken for an instance. What it must *not* flag matters
as much: rules are controlled English with durations and thresholds ("age under 30 min", "0.05 s").
Its precision and recall are measured on ``data/instance_labels.json`` (``benchmarks/instance_filter.py``).

Left out on purpose: judging whether a rule is *true* (that is what votes in memory are for), and a
name that is one lower-case word or a capitalised word with no cue ("for Maria"): too many false alarms.
"""

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from importlib import resources

from ralph_mini import order_words as words
from ralph_mini.rules import Rule

# --- building blocks ------------------------------------------------------------------------------
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
_ID_NOUNS = r"order|customer|client|user|account|invoice|ticket|case|request|shipment|sku|id"
_KEYED = r"(?:\s(?:id\s|no\.?\s?|number\s)?|\s?#\s?)"  # 'order 10023', 'order no. 5531', 'order #12'
_TOKEN_WITH_DIGIT = r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]"  # 2+ chars: 10023, Q7

# A snake_case word in a TOOL slot of the rule grammar ('skip tool_w_100', 'query_v2 finds nothing') is a
# tool name, never an instance: the vocabulary guard (``foreign_names``) judges tool names.
_SNAKE = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
_TOOL_SLOT = rf"(?i:{_B}(?:skip|call|start with)\s({_SNAKE}){_E}|{_B}({_SNAKE})(?=\sfinds\s))"

# Common English words, and the words of the rule grammar and the reflection template: a capitalised
# one starts a sentence or a heading ("Skip ...", "Effective Steps"), it is not a name.
COMMON_WORDS = frozenset(
    """a an the this that these those it its i we you he she they our your their my his her me us them
    when if then than and or but not no yes any all each every some none only also always never just
    do does did is are was were be been has have had can could should would will must may might
    skip call start answer use ask check wait try avoid retry stop keep read write send make give get
    in on at to from by for with without after before about of over under above below into per via
    first last next new old same other more less most least many much few good bad fast slow
    what which who how why where here there note final effective ineffective reusable rule rules
    step steps lesson lessons tool tools order orders customer customers status task tasks field fields
    finds nothing age min
    item items run runs api json http agent model memory cache database payment date time amount""".split()
)
# The world's own words, split into pieces: 'query_payment_api' gives query, payment, api.
WORLD_WORDS = (*words.READ_ONLY_TOOLS, *words.WRITING_TOOLS, *words.STATUSES, *words.FIELD_WORDS)


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


Check = Callable[[re.Match, Collection[str]], str | None]

# --- the patterns, in order: an earlier match claims its characters -------------------------------
# (kind, pattern, check); without a check, the match (or its first group) is the detail. The shapes that
# say their kind come first, then the world's own id formats, then the generic guesses.
SHAPED: tuple[tuple[str, str, Check | None], ...] = (
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
GENERIC: tuple[tuple[str, str, Check | None], ...] = (
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


def instance_details(
    text: str,
    known_words: Iterable[str] = WORLD_WORDS,
    id_patterns: Mapping[str, str] = words.INSTANCE_PATTERNS,
) -> list[str]:
    """What in ``text`` names one instance, in text order: 'skip query_database for A123' ->
    ['order id A123']; 'when status is pending and age under 30 min: answer' -> [].

    ``known_words`` (the world's tools, statuses and fields) are never names or ids; ``id_patterns``
    are the world's own id formats, tried before the generic ones so that their kind is named.
    """
    known = COMMON_WORDS | {p.lower() for w in known_words for p in re.split(r"[\s_]+", w) if p}
    known |= {w.lower() for w in known_words}
    world = tuple((kind, pattern, None) for kind, pattern in id_patterns.items())
    ordered = SHAPED + world + GENERIC
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


def load_instance_labels() -> list[dict]:
    """The labelled set: {'text', 'expected': 'instance' | 'not', 'kind'} per candidate, hard negatives
    (durations, thresholds, tool names, statuses, grammar words) as many as positives."""
    return json.loads(resources.files("ralph_mini").joinpath("data/instance_labels.json").read_text("utf-8"))


def precision_recall(flags: Callable[[str], object], rows: Iterable[dict]) -> dict[str, float | int]:
    """Score a filter (text -> truthy when it sees an instance) on labelled rows: counts and the rates."""
    tp = fp = fn = tn = 0
    for row in rows:
        flagged, instance = bool(flags(row["text"])), row["expected"] == "instance"
        tp, fp = tp + (flagged and instance), fp + (flagged and not instance)
        fn, tn = fn + (instance and not flagged), tn + (not flagged and not instance)
    precision = tp / (tp + fp) if tp + fp else 1.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": tp / (tp + fn)}


def foreign_names(rule: Rule, tools: Collection[str], statuses: Collection[str]) -> list[str]:
    """The names in ``rule`` outside a closed vocabulary of tools and statuses, in rule order.

    With tools ('query_local_cache', 'query_database') and statuses ('paid', 'pending'):
    'when status is urgent: call refund_order' -> ['status urgent', 'tool refund_order'].
    The grammar fixes every other word of a rule, so a rule with no foreign name carries no free text.
    """
    found = [f"status {rule.trigger.status}"] if rule.trigger.status not in (None, *statuses) else []
    named = [rule.trigger.tool] + [action.tool for action in rule.actions]
    found += [f"tool {name}" for name in named if name is not None and name not in tools]
    return list(dict.fromkeys(found))
