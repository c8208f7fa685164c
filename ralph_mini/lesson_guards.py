"""Guards on what a lesson may say: no instances, and a closed vocabulary (notebooks 04 and 07).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. Two cheap guards stop most of it before memory sees a rule:

- ``instance_details``: a rule naming one order, customer, transaction, amount or date describes a
  special case, not a habit, and is rejected (the patterns are the world's, ``order_words.py``);
- ``foreign_names``: a learned rule may name only the world's tools and statuses, so nothing a tool
  returned ("always call refund_order") and nothing a hijacked reflector made up rides into memory.

Left out on purpose: judging whether a rule is *true*; that is what votes in memory are for.
"""

import re
from collections.abc import Collection

from ralph_mini import order_words as words
from ralph_mini.rules import Rule


def instance_details(text: str) -> list[str]:
    """What in ``text`` names one instance: 'skip query_database for A123' -> ['order id A123']."""
    found = []
    for label, pattern in words.INSTANCE_PATTERNS.items():
        found.extend(f"{label} {match}" for match in re.findall(pattern, text))
    return found


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
