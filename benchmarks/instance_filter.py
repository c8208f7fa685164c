"""The instance filter on its labelled set: precision and recall, before and after issue 16.

    python benchmarks/instance_filter.py            # the table, and what the new filter gets wrong
    python benchmarks/instance_filter.py --misses   # also what the two old filters get wrong

"before" is a frozen copy of the two filters the kit had until issue 16: memory's pattern list
(order id, customer, transaction, amount, date) and the reflector's (order id or customer only).
"after" is ``lesson_guards.instance_details``, which memory and the reflector now share.
"""

import re
import sys
from collections import Counter

from ralph_mini.lesson_guards import instance_details, load_instance_labels, precision_recall

OLD_MEMORY_PATTERNS = (  # order_words.INSTANCE_PATTERNS before issue 16
    r"\b[A-Z]\d{3}\b",
    r"\bCUST-\d+\b",
    r"\bTXN-\d+\b",
    r"\b\d+\.\d+\b",
    r"\b\d{4}-\d\d-\d\d\b",
)
OLD_REFLECT_RE = re.compile(r"\b[A-Z]\d{3}\b|\bCUST-\d+\b")  # reflect.INSTANCE_RE before issue 16

FILTERS = {
    "before: memory": lambda text: [m for p in OLD_MEMORY_PATTERNS for m in re.findall(p, text)],
    "before: reflector": OLD_REFLECT_RE.search,
    "after: both": instance_details,
}


def main() -> None:
    rows = load_instance_labels()
    kinds = Counter(row["expected"] for row in rows)
    print(f"{len(rows)} labelled candidates: {kinds['instance']} instances, {kinds['not']} hard negatives")
    print(f"{'filter':<20}{'precision':>10}{'recall':>8}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}")
    for name, flags in FILTERS.items():
        s = precision_recall(flags, rows)
        print(
            f"{name:<20}{s['precision']:>10.2f}{s['recall']:>8.2f}{s['tp']:>5}{s['fp']:>5}{s['fn']:>5}{s['tn']:>5}"
        )
    names = list(FILTERS) if "--misses" in sys.argv else ["after: both"]
    for name in names:
        wrong = [r for r in rows if bool(FILTERS[name](r["text"])) != (r["expected"] == "instance")]
        print(f"\n{name}: {len(wrong)} wrong" + (":" if wrong else ""))
        for row in wrong:
            print(f"  {row['expected']:<9} {row['kind']:<11} {row['text']}  -> {FILTERS[name](row['text'])}")


if __name__ == "__main__":
    main()
