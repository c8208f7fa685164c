"""Reference solution for exercises/ex03_template_validator.ipynb (instructor only).

The spec, which ``ralph_mini/reflect.py`` follows too (exercises/README.md has it in full):

- Lines are stripped; blank lines are ignored. A line ending in ``:`` whose text before the colon,
  stripped and upper-cased, is one of SECTIONS is a heading. A line starting with ``- `` is an item of
  the latest heading. Every other line (a preamble, an item before the first heading) is ignored.
- Each problem is one string ``"<kind>: <details>"``; kinds, in the order they are reported:
  ``missing section`` (names it), ``out of order`` (headings not in SECTIONS order, or one twice; once),
  ``empty section`` (names it; a heading with no items: write ``- none``), then for each item, section
  by section in template order, ``too long`` (more than max_words words), ``vague`` (no word of VOCAB in
  the lower-cased item), ``specific id`` (ID_RE: an order id like A123 or a customer id like CUST-0042;
  once per item), ``not a rule`` (REUSABLE RULES only: ``parse_rule`` raises). Items that are just
  ``none`` (any case) are not checked.
"""

import re

from ralph_mini.rules import RuleSyntaxError, parse_rule

SECTIONS = ("EFFECTIVE STEPS", "INEFFECTIVE STEPS", "REUSABLE RULES", "AVOID")
TOOLS = (
    "query_local_cache",
    "query_database",
    "query_payment_api",
    "get_shipping_status",
    "get_order_history",
    "search_docs",
)
FIELDS = ("status", "amount", "paid_at", "created_at", "txn_id", "payment_status", "order id", "order_id")
VOCAB = TOOLS + FIELDS  # an item must contain one of these (lower case, anywhere in the item)
ID_RE = re.compile(r"\b[A-Z]\d{3}\b|CUST-\d+")  # one specific order or customer


def validate_reflection(text: str, max_words: int = 30) -> list[str]:
    """Every way ``text`` breaks the reflection template, as 'kind: details' strings; [] means valid.

    'EFFECTIVE STEPS:\n- be careful' -> ['missing section: INEFFECTIVE STEPS', ...,
    "vague: 'be careful' in EFFECTIVE STEPS names no tool and no field"]
    """
    order: list[str] = []  # headings as they appear
    items: dict[str, list[str]] = {}
    for line in (raw.strip() for raw in text.splitlines()):
        heading = line[:-1].strip().upper() if line.endswith(":") else None
        if heading in SECTIONS:
            order.append(heading)
            items.setdefault(heading, [])
        elif line.startswith("- ") and order:
            items[order[-1]].append(line[2:].strip())
    problems = [f"missing section: {name}" for name in SECTIONS if name not in order]
    if order != [name for name in SECTIONS if name in order]:
        problems.append(f"out of order: found {', '.join(order)}; expected {', '.join(SECTIONS)}")
    empty = [name for name in SECTIONS if name in items and not items[name]]
    problems += [f"empty section: {name} has no items (write '- none')" for name in empty]
    for name in SECTIONS:
        for item in items.get(name, []):
            if item.lower() == "none":  # an empty section says so explicitly
                continue
            where = f"{item!r} in {name}"
            if len(item.split()) > max_words:
                problems.append(f"too long: {where} has {len(item.split())} words (max {max_words})")
            if not any(word in item.lower() for word in VOCAB):
                problems.append(f"vague: {where} names no tool and no field")
            if ID_RE.search(item):
                problems.append(f"specific id: {where} names {ID_RE.search(item)[0]}")
            if name == "REUSABLE RULES":
                try:
                    parse_rule(item)
                except RuleSyntaxError as err:
                    problems.append(f"not a rule: {where}: {err}")
    return problems
