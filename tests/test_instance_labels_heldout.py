"""The held-out labelled set for the instance filter (``data/instance_labels_heldout.json``) is well formed,
and its benchmark runs.

The set was written by hand before the filter is changed for names and ids in any casing or joining
style; it is scored by ``python benchmarks/instance_filter.py --set heldout``. No precision target is
asserted here: the filter has not been changed yet. The "before" baseline, today's
``lesson_guards.instance_details`` with each world's words as ``known_words`` and its id formats as
``id_patterns`` (352 rows: 178 instances, 174 hard negatives):

    precision 0.95  recall 0.73  TP 130  FP 7  FN 48  TN 167

    per kind:  name recall 0.33 (17 of 52), id 0.84 (67 of 80), amount, date, time, email, phone and
               link 1.00; false positives: 6 of 12 'term' rows (2FA, OAuth2, k8s, COVID-19, ICD-10,
               UTF-8) and 1 of 7 'version' rows (HL7); no tool, status, field, duration, threshold,
               count, percent, grammar or prose row flagged
    per style: snake recall 0.44 (ids in tool slots, alice_chen), camel 0.64, pascal 0.67, kebab 0.74
               (bob-lee), words 0.59 (for alice, customer maria lopez), zh 0.69 (Chinese names)

The issue's target for the changed filter is precision and recall at least 0.97 on this set.
"""

import importlib.util
import re
from collections import Counter
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "instance_filter.py"
KINDS_INSTANCE = {"name", "id", "amount", "date", "time", "email", "phone", "link"}
KINDS_NOT = {
    "tool", "status", "field", "duration", "threshold", "count", "percent",
    "version", "term", "code", "grammar", "prose",
}  # fmt: skip
STYLES = {"snake", "kebab", "camel", "pascal", "digits", "words", "number", "symbol", "zh"}


def load_benchmark():
    spec = importlib.util.spec_from_file_location("instance_filter_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = load_benchmark()
LABELS = bench.load_heldout_labels()
ROWS = LABELS["rows"]


def test_every_row_is_well_formed():
    assert set(LABELS) == {"about", "vocabularies", "rows"}
    for row in ROWS:
        assert set(row) == {"text", "expected", "kind", "style", "vocabulary"}, row
        assert row["vocabulary"] in LABELS["vocabularies"], row
        assert row["expected"] in {"instance", "not"}, row
        assert row["kind"] in (KINDS_INSTANCE if row["expected"] == "instance" else KINDS_NOT), row
        assert row["style"] in STYLES, row
        assert row["text"] == row["text"].strip() and len(row["text"].split()) <= 30, row


def test_size_balance_and_no_duplicates():
    classes = Counter(row["expected"] for row in ROWS)
    assert len(ROWS) >= 300
    assert classes["instance"] >= 0.4 * len(ROWS) and classes["not"] >= 0.4 * len(ROWS), classes
    texts = Counter(row["text"] for row in ROWS)
    assert [text for text, n in texts.items() if n > 1] == []


def test_vocabularies_are_other_worlds_plus_the_order_desk():
    vocabularies = LABELS["vocabularies"]
    assert len(vocabularies) >= 5 and "order_desk" in vocabularies
    for name, vocabulary in vocabularies.items():
        assert set(vocabulary) == {"known_words", "id_patterns"}, name
        assert all(isinstance(w, str) and w for w in vocabulary["known_words"]), name
        for kind, pattern in vocabulary["id_patterns"].items():
            assert kind and re.compile(pattern), (name, kind)
    assert Counter(row["vocabulary"] for row in ROWS).keys() == vocabularies.keys()  # every world is used


def test_benchmark_runs_and_returns_rates():
    scores = bench.heldout_scores(LABELS)
    overall = scores["overall"]
    assert overall["tp"] + overall["fp"] + overall["fn"] + overall["tn"] == len(ROWS)
    assert 0.0 <= overall["precision"] <= 1.0 and 0.0 <= overall["recall"] <= 1.0
    for key in ("kind", "style", "vocabulary"):
        for group in scores[key].values():
            for rate in (group["precision"], group["recall"]):
                assert rate is None or 0.0 <= rate <= 1.0
    assert len(scores["misses"]) == overall["fp"] + overall["fn"]


def test_benchmark_prints_the_heldout_table(capsys):
    bench.main(["--set", "heldout"])
    out = capsys.readouterr().out
    assert out.startswith(f"held-out set: {len(ROWS)} labelled candidates")
    assert "per kind" in out and "per style" in out and "wrong" in out
