"""What a token, or a person's name, looks like to the instance filter (notebook 07; the filter itself is
``lesson_guards.instance_details``, which runs ``TOKEN_PATTERNS`` and ``NAME_PATTERNS`` after its links,
dates, times, amounts, phone numbers and the world's own id formats).

A lesson must hold for every record, so a token naming ONE thing outside the world's vocabulary is an
instance, whatever its casing or joining style (snake_case, kebab-case, camelCase, PascalCase, digits):

- a *code*: a token with a digit names one record (cust_0042, inc-20931, ticketId4471, usr7731, A123)
  unless every piece of it has a term's shape: a word, a small number, a word and a small number, a
  numeronym, a power of two (utf-8, COVID-19, OAuth2, 2FA, k8s, HL7, p95, v2, gpt-4o, SHA-256). Zero
  padding (ws-ana-07, 0042) and runs of three or more digits are what serials look like;
- a *name word*: not an ordinary English word (okafor, jdoe: strength 2), or an ordinary word the
  dictionary also spells as a proper noun (tom, smith, lee: strength 1). Jargon is not a name word:
  webhook (two words run together), onboarding (a derivational ending), kb (no vowel), VPN (capitals);
- a *joined name*: two or three parts, each a name word: alice_chen, bob-lee, mariaLopez, JohnSmith,
  dr_osei; not look-alike, follow_up, refund_order, PayPal, JavaScript, iPhone, Wi-Fi;
- a *cued name*: a name word after a title (Dr Osei, mrs. patel, Nurse Kim), a role noun (customer
  maria lopez, requester is jdoe, supplier Acme Tools), 'for' (for alice,), two capitalised name words
  (Maria Lopez; not Ralph Loop), and in Chinese a surname with a title (陈医生), after a role (客户张伟)
  or before 的 (张伟的电脑; not 严重的延误).

The word lists are package data, built by ``tools/build_word_lists.py`` and read once, on first use:
``data/english_words.txt.gz`` is Debian's ``wamerican`` 2020.12.07-2 (SCOWL size 50) without
possessives, case kept (74,744 entries, 205 KB: 'bob' is an ordinary word, 'Bob' a proper noun);
``data/han_words.txt.gz`` holds jieba 0.42.1's two-character words that start with a surname character
and are not tagged as names (1,214 entries: 严重, 许多, 黄色).

Left out on purpose: a list of first names or surnames (a name that is an ordinary word and no proper
noun, or one lower-case word with no cue, is not seen: 'for tom,', 'priya closes tickets'), places and
brands written like names (Hong Kong, TikTok are flagged), and any parsing beyond the next few words.
"""

import gzip
import re
import unicodedata
from collections.abc import Collection
from functools import cache
from importlib import resources

# Common surnames that are not also everyday single-character words (高 high, 周 week, 于 at are left out).
HAN_SURNAMES = (
    "王李张刘陈杨黄赵吴徐孙马朱胡郭林罗郑梁谢宋唐许韩冯邓曹彭曾肖董袁潘蒋蔡杜叶苏魏吕丁沈姚卢姜崔钟谭陆"
    "汪范廖贾夏韦邹孟熊秦邱薛闫段雷侯龙陶黎贺顾毛郝龚邵钱严覃戴莫孔汤"
)
_PREFIXES = frozenset(
    "re pre co non un mis anti multi semi sub inter intra bi tri de neo pseudo quasi".split()
)
_WORD_ENDING = re.compile(r"(?:tion|sion|ment|ness|ity|ism|able|ible|ful|less|ous|ize|ise)s?$|\w{6}ings?$")
_CALENDAR = frozenset(  # proper nouns, but no one's name: 'Black Friday', 'Monday mornings'
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july"
    " august september october november december".split()
)
# A piece of a code that is still a term: utf, 8, 19, 4o, 2FA, v2, HL7, OAuth2, SpO2, p95, sha256, B2B,
# k8s, i18n, HbA1c; not A123, 0042, OrderA123, AB12CD.
_TERM_PIECE = re.compile(
    r"[A-Za-z]+|(?:0|[1-9]\d?)[A-Za-z]{0,3}|[A-Za-z]+(?:0|[1-9]\d?)|(?:[a-z]{3,}|[A-Z]{3,})[1-9]\d\d"
    r"|[A-Za-z][1-9][A-Za-z]|[A-Za-z]*[a-z][A-Za-z]*[1-9]\d?[a-z]{1,2}"
)
_POWERS_OF_TWO = frozenset(str(2**k) for k in range(6, 17))  # a size or a width: SHA-256, RSA-2048
_UP, _LOW = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"  # Latin letters, with accents: José, Müller
_PART = re.compile(rf"[{_UP}]{{2,}}(?![{_LOW}])|[{_UP}]?[{_LOW}]+|[{_UP}]")  # mariaLopez -> maria, Lopez
_TITLE_PART = frozenset("mr mrs ms mx dr prof".split())  # dr_amara_osei is Dr Amara Osei


def _read_lines(name: str) -> list[str]:
    raw = resources.files("ralph_mini").joinpath(f"data/{name}").read_bytes()
    return gzip.decompress(raw).decode("utf-8").split()


@cache
def english() -> tuple[frozenset[str], frozenset[str]]:
    """(ordinary words, proper nouns), lower-cased: 'smith' is in both, 'okafor' in neither."""
    entries = _read_lines("english_words.txt.gz")
    return frozenset(w for w in entries if w.islower()), frozenset(w.lower() for w in entries if w.istitle())


@cache
def han_words() -> frozenset[str]:
    """Everyday two-character words that start with a surname character: 严重, 许多, 马上."""
    return frozenset(_read_lines("han_words.txt.gz"))


# --- one token ------------------------------------------------------------------------------------
def name_strength(word: str, known: Collection[str] = ()) -> int:
    """How much ``word`` alone looks like a person's name: 'okafor' -> 2 (no dictionary has it), 'Tom' -> 1
    (an ordinary word, also a proper noun), 'paid', 'VPN', 'kb', 'x', 'onboarding', 'webhooks' -> 0.
    ``known`` (lower-case: the world's words and the grammar's) are never names."""
    word = re.sub(r"['’]s$", "", word)
    lower = re.sub(r"['’]", "", word.lower())  # O'Brien -> obrien
    if len(lower) < 2 or not lower.isalpha() or (word.isupper() and len(word) > 1):
        return 0  # a letter, a number, an acronym
    ascii_ = unicodedata.normalize("NFKD", lower).encode("ascii", "ignore").decode()  # björk -> bjork
    if not re.search("[aeiou]" if len(ascii_) < 3 else "[aeiouy]", ascii_):
        return 0  # unpronounceable: kb, sms, py
    if lower in known or lower in _PREFIXES or lower in _CALENDAR:
        return 0
    ordinary, proper = english()
    if lower in ordinary:  # an ordinary word, a name only if also a proper noun
        return 1 if lower in proper else 0
    return 0 if _WORD_ENDING.search(lower) or _compound(lower.removesuffix("s"), ordinary) else 2


def _compound(word: str, ordinary: frozenset[str]) -> bool:
    """Two ordinary words of 3+ letters run together are jargon, not a name: webhook, chatbot; not okafor."""
    return any(word[:i] in ordinary and word[i:] in ordinary for i in range(3, len(word) - 2))


def word_strength(word: str, known: Collection[str] = ()) -> int:
    """``name_strength`` of a written word, hyphenated ones by their weakest part: 'Jean-Luc' -> 1."""
    return min((name_strength(p, known) for p in word.split("-") if p), default=0)


def is_code(token: str) -> bool:
    """Whether a token with a digit names one record: 'cust_0042', 'ws-ana-07', 'txnId88231', 'k9x2',
    '978-0-14-103614-4' -> True; 'utf-8', 'COVID-19', 'OAuth2', '2FA', 'k8s', 'p95', 'gpt-4o', '21-50',
    'ubuntu-22.04', 'H.264' -> False. Units (24h, 0.05s) are the caller's to set aside."""
    if not any(c.isdigit() for c in token):
        return False
    pieces = re.split(r"[-_]", token)
    if all(p.replace(".", "").isdigit() for p in pieces):  # a range or a version is two numbers; an ISBN more
        return len(pieces) >= 3 and any(len(p) >= 3 for p in pieces)
    return not all(_term(p) for p in pieces)


def _term(piece: str) -> bool:
    """'gpt', '4o', 'v2', 'py3.11', '22.04', 'H.264' are terms: after a dot, a number is a version's."""
    head, *decimals = piece.split(".")
    return (head in _POWERS_OF_TWO or bool(_TERM_PIECE.fullmatch(head))) and all(
        d.isdigit() or _TERM_PIECE.fullmatch(d) for d in decimals
    )


def joined_name(token: str, known: Collection[str] = ()) -> bool:
    """Whether a joined token is a person's name: 'alice_chen', 'bob-lee', 'mariaLopez', 'JohnSmith' and
    'dr_osei' -> True; 'refund_order', 'look-alike', 'PayPal', 'macOS', 'iPhone', 'Wi-Fi' -> False."""
    if "." in token or token.isupper() or any(c.isdigit() for c in token):
        return False
    parts = [p for chunk in re.split(r"[-_]", token) for p in _PART.findall(chunk)]
    titled = len(parts) > 1 and parts[0].lower() in _TITLE_PART
    parts = parts[1:] if titled else parts
    if not (1 if titled else 2) <= len(parts) <= 3 or len(parts[-1]) < 3:
        return False
    return all(name_strength(p, known) for p in parts)


# --- (kind, pattern, check) rows for lesson_guards' table: identifiers, then names by their cues -----------
# After a number, a duration, a count, a measure or a threshold: never an amount or an id.
UNITS = (
    r"ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|weeks?|x|k|%|st|nd|rd|th"
    r"|kg|g|lbs?|km|m|cm|mm|kb|mb|gb|tb|秒|分钟|小时|天"
)
_UNIT_TOKEN = re.compile(rf"\d+(?:\.\d+)?(?:{UNITS})", re.I)  # 24h, 0.05s, 2nd, 3x, 30kg
_L = "A-Za-zÀ-ÖØ-öø-ÿ"
# An identifier: has a digit or '_', or joins words with '-' or '.', or is camelCase / PascalCase.
_IDENTIFIER = (
    rf"(?<![{_L}0-9_])(?=[{_L}0-9_]*[\d_]|[{_L}0-9]+[-.][A-Za-z0-9]|[{_L}]*[{_LOW}][{_UP}])"
    rf"[{_L}0-9]+(?:[-_.][{_L}0-9]+)*(?![{_L}0-9_])"
)


def _code(match: re.Match, known: Collection[str]) -> str | None:
    """A code, not a unit: 'cust_0042', 'k9x2'; not 'utf-8', 'gpt-4o', '24h' (see ``is_code``)."""
    token = match[0]
    return None if token.lower() in known or _UNIT_TOKEN.fullmatch(token) or not is_code(token) else token


def _joined(match: re.Match, known: Collection[str]) -> str | None:
    """'alice_chen', 'bob-lee', 'mariaLopez', 'JohnSmith' (see ``joined_name``)."""
    return match[0] if joined_name(match[0], known) else None


TOKEN_PATTERNS = (
    ("id", rf"{_IDENTIFIER}(?!\s?(?i:{UNITS})(?![A-Za-z]))", _code),
    ("name", _IDENTIFIER, _joined),
)

_WORD = rf"[{_UP}{_LOW}]+(?:['’-][{_UP}{_LOW}]+)*(?![\w'’-])"  # a whole written word: okafor, Patel's
_NAME_WORD = rf"[{_UP}][{_LOW}]*(?:['’-][{_UP}][{_LOW}]+)+|[{_UP}][{_LOW}]+"  # Maria, O'Brien, Jean-Luc
_TITLES = r"(?:Mr|Mrs|Ms|Mx|Dr|Prof|Miss|Nurse|Sir|Madam)\.?|(?i:mr|mrs|dr|prof|nurse)\.?|(?i:ms|mx)\."
_ROLES = (
    "customer|client|buyer|shopper|user|requester|requestor|reporter|assignee|owner|caller|sender"
    "|recipient|patient|clinician|doctor|physician|nurse|driver|courier|picker|packer|supplier|vendor"
    "|seller|merchant|patron|member|borrower|employee|technician|engineer|tenant|guest|student|pupil"
    "|teacher|tutor|instructor|coach|parent|guardian|colleague|manager|supervisor|applicant|passenger"
    "|visitor|resident|landlord|named|called"
)
_HAN = "\u4e00-\u9fff"
_HAN_TITLES = "先生|女士|小姐|太太|医生|大夫|老师|经理|护士|师傅|教授|主任"
_HAN_ROLES = "客户|顾客|用户|买家|患者|病人|司机|读者|员工"  # two characters each: a fixed-width look-behind


def _title_cased(text: str) -> bool:
    """'When Status Is Pending: Skip Query_Database': capitals say nothing about names there."""
    words = re.findall(r"[A-Za-z]+", text)
    return len(words) >= 4 and sum(w[0].isupper() for w in words) >= 0.6 * len(words)


def _after_title(match: re.Match, known: Collection[str]) -> str | None:
    """After a title, name or capitalised words: 'Dr. Osei', 'dr osei', 'Nurse Kim'; not 'nurse notes'."""
    name = []
    for word in match[1].split():
        if not (word_strength(word, known) or (word[:1].isupper() and word.lower() not in known)):
            break
        name.append(re.sub(r"['’]s$", "", word))
    return " ".join(name) or None


def _after_role(match: re.Match, known: Collection[str]) -> str | None:
    """After a role noun: capitalised words that are not the world's or the grammar's ('supplier Acme Tools',
    unless the whole text is title-cased), or lower-case name words with one no dictionary has ('customer
    maria lopez', 'requester is jdoe'); not 'customer asked', 'customer Status', 'picker tom'."""
    capitals, name = not _title_cased(match.string), []
    for word in match[1].split():
        bare = re.sub(r"['’]s$", "", word)
        capitalised = capitals and bare[:1].isupper() and not bare.isupper() and bare.lower() not in known
        if capitalised or (bare.islower() and word_strength(bare, known)):
            name.append(bare)
        else:
            break
    lower = [w for w in name if w.islower()]
    strong = len(lower) < len(name) or any(word_strength(w, known) == 2 for w in lower)
    return " ".join(name) if name and strong else None


def _after_for(match: re.Match, known: Collection[str]) -> str | None:
    """'for alice, start with ...', 'the order for Hannah paid late': a word no dictionary has, capitalised or
    closing a clause. Not 'for refunds', 'for Python', 'for GitHub', 'for Spanish classes'."""
    word, rest = match[1], match.string[match.end() :].lstrip()
    if not (word.islower() or word.istitle()) or word_strength(word, known) < 2:
        return None
    if word.istitle():
        return None if re.match(r"[a-z]+s\b", rest) else word  # 'for Spanish classes' qualifies a plural
    return word if not rest or rest[0] in ",;:.!?)" else None


def _name_run(match: re.Match, known: Collection[str]) -> str | None:
    """The longest run of two or more capitalised name words: 'When Maria Lopez asked' -> 'Maria Lopez';
    'Effective Steps', 'The Ralph Loop' -> None (ordinary words are not names)."""
    runs, run = [], []
    for word in match[0].split():
        run = [*run, word] if word_strength(word, known) else []
        runs.append(run)
    best = max(runs, key=len)
    return " ".join(best) if len(best) >= 2 else None


def _han_name(match: re.Match, known: Collection[str]) -> str | None:
    """'张伟的电脑' -> '张伟'; not '严重的延误' (严重 is a word: ``han_words``) nor '顾客的' (a role)."""
    return None if match[0][:2] in han_words() or match[0][:2] in _HAN_ROLES else match[0]


_B = r"(?<![A-Za-z0-9_])"
NAME_PATTERNS = (
    ("name", rf"{_B}(?:{_TITLES})\s+({_WORD}(?:\s+{_WORD})?)", _after_title),
    ("name", rf"(?i:{_B}(?:{_ROLES})\s+(?:(?:is|was)\s+)?)({_WORD}(?:\s+{_WORD}){{0,2}})", _after_role),
    ("name", rf"(?i:{_B}for\s+)({_WORD})", _after_for),
    ("name", rf"(?<![\w'’-])(?:{_NAME_WORD})(?:\s+(?:{_NAME_WORD}))+(?![\w'’-])", _name_run),
    ("name", rf"[{HAN_SURNAMES}](?:{_HAN_TITLES})|(?<={_HAN_ROLES})[{HAN_SURNAMES}][{_HAN}]", None),
    ("name", rf"[{HAN_SURNAMES}](?:(?!的)[{_HAN}]){{1,2}}(?=的)", _han_name),
)
