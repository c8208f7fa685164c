"""Guards on what a lesson may say: no instances, and a closed vocabulary (notebooks 03, 04 and 07).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. Two cheap guards stop most of it before memory sees a rule:

- ``instance_details``: a text naming one record, person, transaction, amount, time, date, e-mail
  address, phone number or link describes a special case, not a habit. The reflector's validator rejects
  such an item and memory rejects such a rule; both call this one function, so they cannot disagree;
- ``foreign_names``: a learned rule may name only the world's tools and statuses, so nothing a tool
  returned ("always call refund_order") and nothing a hijacked reflector made up rides into memory.

``instance_details`` is generic: it knows what ids, amounts, times and names look like in any world, in
English and in Chinese, in any casing or joining style (cust_0042, inc-20931, ticketId4471, alice_chen,
bob-lee, mariaLopez: ``instance_shapes`` judges a token and finds people by their cues). The caller adds the
world's own words (tools, statuses, fields, record noun: ``world.Words``) and id formats: those are never
instances, "ticket 4471" is an id where the record is a ticket, and any other identifier is judged wherever
it stands, a tool slot too ('skip cust_0042'); with no words given, a tool slot is left to ``foreign_names``.
What it must *not* flag matters as much: durations and thresholds ("age under 30 min", "0.05 s"), versions
and terms (v2, Python 3.11, UTF-8, OAuth2, k8s), English compounds (follow-up). Measured on
``data/instance_labels*.json`` (five worlds, one held out) by ``benchmarks/instance_filter.py``.

Left out on purpose: judging whether a rule is *true* (that is what votes in memory are for), and a
name that is one word with no cue ("Priya closes tickets"), or an ordinary English word ("for tom").
"""

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ralph_mini import instance_shapes as shapes
from ralph_mini.rules import Rule
from ralph_mini.world import Words

# --- building blocks ------------------------------------------------------------------------------
# "Not inside a longer word": ASCII letters, digits and '_' only. Not \b, which treats Chinese as
# letters too, so that '订单A123' would hide 'A123'.
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 1,299.00 | 215 | 12.5
_CODES = r"USD|EUR|GBP|CNY|RMB|JPY|CAD|AUD|CHF|HKD|INR"
_MONEY_WORDS = rf"{_CODES}|dollars?|euros?|pounds?|yuan|cents?"
_UNITS = shapes.UNITS
_NOT_UNIT = rf"(?!\s?(?i:{_UNITS})(?![A-Za-z]))"
_MONTHS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_ID_NOUNS = r"customer|client|user|account|invoice|case|request|shipment|sku|id"  # plus the world's noun
_KEYED = r"(?:\s(?:id\s|no\.?\s?|number\s)?|\s?#\s?)"  # 'order 10023', 'order no. 5531', 'order #12'
_TOKEN_WITH_DIGIT = r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]"  # 2+ chars: 10023, Q7
# Without the world's words, a snake_case word in a slot of the rule grammar ('skip tool_w_100', 'query_v2
# finds nothing', 'status is level_3') is taken for the world's: ``foreign_names`` judges it.
_SNAKE = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
_SLOTS = rf"(?i:{_B}(?:skip|call|start with|status is|finds the)\s({_SNAKE}){_E}|{_B}({_SNAKE})(?=\sfinds\s))"
_NOT_JOINED = r"(?<![A-Za-z0-9]-)"  # not the tail of a joined token: aa-10001, ubuntu-22.04 are one token
_HAN = "\u4e00-\u9fff"
_HAN_UNITS = "个次元块分秒天年月日号点时周件条位名人张台箱斤克米度倍%毫以"  # '500次', '300元', '200以上'
_HAN_LIMITS = ("超过", "低于", "高于", "不足", "大于", "小于", "至少", "最多", "前", "约", "共", "每", "第")

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
    step steps lesson lessons tool tools customer customers status task tasks field fields
    finds nothing age min record records
    item items run runs api json http agent model memory cache database payment date time""".split()
)


# --- checks on a match that a regular expression cannot say simply -------------------------------
def _digits_of_a_phone(match: re.Match, known: Collection[str]) -> str | None:
    """A phone number has 7 to 15 digits; fewer is a count or a duration ('30 20')."""
    return match[0] if 7 <= sum(c.isdigit() for c in match[0]) <= 15 else None


def _money_not_threshold(match: re.Match, known: Collection[str]) -> str | None:
    """'99.5' is an amount, but not after a comparison, a version or an acronym ('above 0.8', 'TLS 1.3')."""
    before = match.string[: match.start()].split()
    threshold_words = {"under", "over", "above", "below", "than", "least", "most", "threshold", "to"}
    version_words = {"version", "python", "v", "release", "model"}
    metric_words = {"confidence", "similarity", "score", "weight", "ratio", "rate", "factor"}
    last = before[-1].strip(":=") if before else ""
    chinese = tuple("率 阈值 超过 低于 高于 不足 大于 小于 至少 最多".split())  # no spaces: a suffix
    if last.lower() in threshold_words | version_words | metric_words or last.rstrip("为").endswith(chinese):
        return None
    return None if len(last) > 1 and last.isalpha() and last.isupper() else match[0]


def _keyed_code(match: re.Match, known: Collection[str]) -> str | None:
    """After one of the world's words, a code or a number of 4+ digits: 'ticket 4471'; not 'dock 12'."""
    token = match[1]
    serial = sum(c.isdigit() for c in token) >= 4 and not (token.isdigit() and token.endswith("00"))
    return token if serial or shapes.is_code(token) else None


def _han_number(match: re.Match, known: Collection[str]) -> str | None:
    """3+ digits right after a Chinese noun are an id ('工单 4471'), not after a limit ('超过500')."""
    before = match.string[: match.start()].rstrip()
    return None if before.endswith(_HAN_LIMITS) or match[1].endswith("00") else match[1]


Check = Callable[[re.Match, Collection[str]], str | None]

# --- the patterns, in order: an earlier match claims its characters -------------------------------
# (kind, pattern, check); without a check, the match (or its first group) is the detail. The shapes that
# say their kind come first, then the world's own id formats, then the generic guesses.
SHAPED: tuple[tuple[str, str, Check | None], ...] = (
    # a link or an e-mail address names one page or one person; so does a handle (@jdoe), an IP address
    ("link", r"https?://\S+|www\.\S+", None),
    ("email", rf"{_B}[\w.+-]+@[\w-]+(?:\.[\w-]+)+", None),
    ("name", r"(?<![\w.@])@[A-Za-z][\w.-]*[A-Za-z0-9]", None),
    ("id", rf"{_B}(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?![\d.])", None),
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
    # '#10023', '#A-77', and a number of 5 or more digits that is not round (100000 lessons is a count)
    (
        "id",
        rf"(?<![A-Za-z0-9&])#\s?{_TOKEN_WITH_DIGIT}|#\s?\d|{_B}{_NOT_JOINED}(?!\d+000{_E})\d{{5,}}{_E}{_NOT_UNIT}",
        None,
    ),
    # a number of 3 or more digits right after a Chinese noun: 工单 4471, 借书证 2290
    (
        "id",
        rf"(?<=[{_HAN}])\s?(\d{{3,}})(?![\d.,:])(?!\s?(?:[{_HAN_UNITS}]|(?i:{_UNITS})(?![A-Za-z])))",
        _han_number,
    ),
    # a decimal with no unit and no comparison before it is an amount: 'the total is 99.50'
    ("amount", rf"(?<![A-Za-z0-9_.,]){_NOT_JOINED}\d+\.\d+(?![\d.]){_NOT_UNIT}", _money_not_threshold),
    # an identifier: a code (X9F2, ord_8f3k2, INV-2024-0042, txnId88231) or a joined name (alice_chen); then a
    # person by a title, a role noun, 'for', two name words in a row, Chinese cues (see instance_shapes)
    *shapes.TOKEN_PATTERNS,
    *shapes.NAME_PATTERNS,
)


@lru_cache(maxsize=64)
def _compiled(
    known_words: tuple[str, ...], id_patterns: tuple[tuple[str, str], ...], nouns: tuple[str, ...]
) -> tuple[list[re.Pattern], list[tuple[str, re.Pattern, Check | None]], frozenset[str]]:
    """One world's filter, compiled once: (what its words protect, the patterns in order, known words)."""
    known = COMMON_WORDS | {p.lower() for w in known_words for p in re.split(r"[\s_]+", w) if p}
    known |= {w.lower() for w in known_words}
    world = [(kind, pattern, None) for kind, pattern in id_patterns]
    keyed = "|".join(re.escape(noun) for noun in nouns)
    if keyed:
        world.append(("id", rf"(?i:{_B}(?:{keyed}){_KEYED})({_TOKEN_WITH_DIGIT}){_E}{_NOT_UNIT}", None))
    pieces = {p for w in known_words for p in re.split(r"[\s_-]+", w) if p not in COMMON_WORDS}
    plain = sorted(
        {w for w in {*known_words, *pieces} if re.fullmatch("[A-Za-z_]{3,}", w)}, key=len, reverse=True
    )
    if plain:  # the world's own words key a code too: 'ticket 4471', 'room 1412' (from room_number)
        keys = "|".join(map(re.escape, plain))
        world.append(("id", rf"(?i:{_B}(?:{keys}){_KEYED})({_TOKEN_WITH_DIGIT}){_E}{_NOT_UNIT}", _keyed_code))
    code_names = sorted((w for w in known_words if re.search(r"[_\d-]", w)), key=len, reverse=True)
    protect = [rf"(?i:{_B}(?:{'|'.join(map(re.escape, code_names))}){_E})"] if code_names else []
    protect += [] if known_words else [_SLOTS]  # no vocabulary: only foreign_names can judge a tool slot
    ordered = [(kind, re.compile(pattern), check) for kind, pattern, check in (*SHAPED, *world, *GENERIC)]
    return [re.compile(p) for p in protect], ordered, frozenset(known)


@dataclass(frozen=True)
class Vocabulary:
    """A world's words as the instance filter takes them: never an instance (its tools, statuses, fields,
    record noun), its id formats, and the noun that keys an id ('ticket 4471'). One value, so memory, the
    reflector and the loop pass the filter the same words."""

    known_words: tuple[str, ...] = ()
    id_patterns: tuple[tuple[str, str], ...] = ()
    nouns: tuple[str, ...] = ()

    @classmethod
    def of(cls, words: Words, tool_names: Iterable[str]) -> "Vocabulary":
        known = tuple(dict.fromkeys([*tool_names, *words.vocabulary()]))
        return cls(known, tuple(words.id_formats.items()), (words.noun,))

    def filter_arguments(self) -> dict:
        return {"known_words": self.known_words, "id_patterns": dict(self.id_patterns), "nouns": self.nouns}


def instance_details(
    text: str,
    known_words: Iterable[str] = (),
    id_patterns: Mapping[str, str] | None = None,
    nouns: Iterable[str] = (),
) -> list[str]:
    r"""What in ``text`` names one instance, in text order: with the order desk's id format
    {'order id': r'\b[A-Z]\d{3}\b'}, 'skip query_database for A123' -> ['order id A123'];
    'when status is pending and age under 30 min: answer' -> []; with a helpdesk's words,
    'when status is open: skip ticket_4471' -> ['id ticket_4471'].

    ``known_words`` (the world's tools, statuses and fields) are never names or ids; ``id_patterns``
    are the world's own id formats, tried before the generic ones so that their kind is named;
    ``nouns`` (the world's record noun) key an id as 'customer' does: 'ticket 4471'.
    """
    return list(_details(text, tuple(known_words), tuple((id_patterns or {}).items()), tuple(nouns)))


# Once per text and vocabulary (0.3-0.5 ms each): the validator, propose and every weight ask again and again.
@lru_cache(maxsize=4096)
def _details(text: str, known_words: tuple, id_patterns: tuple, nouns: tuple) -> tuple[str, ...]:
    protect, ordered, known = _compiled(known_words, id_patterns, nouns)
    claimed = [False] * len(text)
    for pattern in protect:  # the world's code names, and the rule's tool slots, claim their characters
        for match in pattern.finditer(text):
            start, end = match.span(match.lastindex or 0)
            claimed[start:end] = [True] * (end - start)
    found: list[tuple[int, str]] = []
    for kind, pattern, check in ordered:
        for match in pattern.finditer(text):
            if any(claimed[slice(*match.span(match.lastindex or 0))]):  # what it reports is free
                continue
            detail = check(match, known) if check else next((g for g in match.groups() if g), match[0])
            if detail:
                start = text.find(detail, match.start(), match.end())  # the detail claims its characters
                start, end = (start, start + len(detail)) if start >= 0 else match.span()
                claimed[start:end] = [True] * (end - start)
                found.append((start, f"{kind} {detail.strip()}"))
    return tuple(detail for _, detail in sorted(found))


def load_instance_labels() -> list[dict]:
    """The labelled set, {'text', 'expected': 'instance' | 'not', 'kind'} a row; as many hard negatives."""
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
