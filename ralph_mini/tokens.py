"""The kit's token ruler (notebook 01): one count for budgets, cost tables and the offline model's usage.

Why approximate: the kit needs one consistent ruler, not a tokenizer per model. ASCII text counts ~4
characters a token, any other character one token (within ~20% of real BPE tokenizers on English; CJK
text counts one token a character). A real API reports what it counted in ``usage``; the offline model
reports ``count_prompt_tokens`` of what it was sent, so cost tables mean the same on both.
"""

import json
import marshal
import math
from functools import lru_cache
from typing import Any


def count_tokens(text: str) -> int:
    """Approximate token count: ASCII text ~4 characters a token, any other character ~1 token.
    'hello world!' (12 ASCII chars) -> 3; '订单状态' -> 4."""
    ascii_chars, other_chars = char_counts(text)
    return math.ceil(ascii_chars / 4) + other_chars


def char_counts(text: str) -> tuple[int, int]:
    """How many of ``text``'s characters are ASCII, and how many are not: all ``count_tokens`` reads."""
    if text.isascii():  # the common case, in C: no Python loop over every character
        return len(text), 0
    ascii_chars = len(text.encode("ascii", "ignore"))  # in C too: the characters under 128
    return ascii_chars, len(text) - ascii_chars


def count_prompt_tokens(messages: list[dict], tools: list[dict]) -> int:
    """Tokens sent in one request: the messages and the tool schemas, each list as JSON. A list's JSON is
    its items' JSON joined by ', ' inside '[]', so each message (and each set of schemas) is written out
    once, known by its ``marshal`` bytes (equal bytes, equal value), however many turns resend it: every
    turn resends the whole conversation, and writing all of it out each turn (issue 27) cost a task
    the square of its turns."""
    counts = [json_char_counts(message) for message in messages]
    brackets_and_commas = 2 * max(len(messages), 1)  # '[', ']', and ', ' between the messages
    ascii_chars = brackets_and_commas + sum(ascii_in for ascii_in, _ in counts)
    schema_ascii, schema_other = json_char_counts(tools)
    return (math.ceil(ascii_chars / 4) + sum(other for _, other in counts)
            + math.ceil(schema_ascii / 4) + schema_other)  # fmt: skip


def json_char_counts(value: Any) -> tuple[int, int]:
    """``char_counts`` of ``value`` written as JSON, remembered by its ``marshal`` bytes."""
    try:
        return packed_char_counts(marshal.dumps(value))
    except ValueError:  # a value marshal cannot pack (an OrderedDict, an enum): written out each time
        return char_counts(json.dumps(value, ensure_ascii=False))


@lru_cache(maxsize=4096)
def packed_char_counts(packed: bytes) -> tuple[int, int]:
    """``char_counts`` of a JSON value given as its ``marshal`` bytes."""
    return char_counts(json.dumps(marshal.loads(packed), ensure_ascii=False))
