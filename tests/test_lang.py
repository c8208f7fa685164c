"""The reader's language (ralph_mini/lang.py): where it comes from, what it changes, what it leaves."""

import io
import json
import warnings

import pytest

from ralph_mini import lang
from ralph_mini.worlds import clinic, orders


@pytest.fixture
def no_setting(monkeypatch, tmp_path):
    """No RALPH_LANG, and a working folder with no .ralph_lang above it."""
    monkeypatch.delenv("RALPH_LANG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_english_unless_told(no_setting):
    assert lang.current() == "en"
    assert lang.tr("correct", "正确") == "correct"


def test_the_nearest_marker_file_names_the_edition(no_setting):
    (no_setting / lang.MARKER).write_text("zh\n")
    inner = no_setting / "build_your_own"
    inner.mkdir()
    for folder in (no_setting, inner):  # exercises/zh/ and exercises/zh/build_your_own/
        assert lang.marker_language(folder) == "zh"
    assert lang.tr("correct", "正确") == "正确"


def test_the_environment_wins_over_the_folder(no_setting, monkeypatch):
    (no_setting / lang.MARKER).write_text("zh")
    monkeypatch.setenv("RALPH_LANG", "en")
    assert lang.current() == "en"


def test_an_unknown_language_says_what_to_use(no_setting, monkeypatch):
    monkeypatch.setenv("RALPH_LANG", "fr")
    with pytest.raises(ValueError, match="use one of en, zh"):
        lang.current()


def test_phrasings_are_told_apart_by_their_script():
    texts = ("What is the status of order {id}?", "订单{id}的支付状态是什么？", "Where is {id}?")
    assert lang.in_language(texts, "en") == (0, 2)
    assert lang.in_language(texts, "zh") == (1,)
    assert lang.in_language(texts, None) == (0, 1, 2)
    assert lang.in_language(texts[:1], "zh") == (0,), "no phrasing in that language: ask in every one"


def test_chinese_questions_ask_about_the_same_orders_with_the_same_truth():
    english, chinese = orders.make_suite(n=30, seed=7), orders.make_suite(n=30, seed=7, language="zh")
    assert all(not lang.is_chinese(t.question) for t in english.tasks)
    assert all(lang.is_chinese(t.question) for t in chinese.tasks)
    same = [(t.record_id, t.expected, t.kind, t.oracle_calls) for t in english.tasks]
    assert same == [(t.record_id, t.expected, t.kind, t.oracle_calls) for t in chinese.tasks]
    # the n-th Chinese phrasing translates the n-th English one: the same draw in both editions
    assert [t.phrasing + 5 for t in english.tasks] == [t.phrasing for t in chinese.tasks]


def test_the_english_suite_is_the_one_it_always_was():
    """Appending Chinese phrasings must not move an English question (committed outputs depend on it)."""
    first = orders.make_suite(n=3, seed=7).tasks
    assert [t.question for t in first] == [
        "Check order A123 and report its status and amount.",
        "Check order B456 and report its status and amount.",
        "Has order C789 been paid? Please give the status and the amount.",
    ]


def test_a_world_asked_in_both_languages_keeps_its_mix_unless_a_language_is_given():
    mixed = clinic.make_suite(n=40, seed=3).tasks
    assert {lang.is_chinese(t.question) for t in mixed} == {True, False}
    only_chinese = clinic.make_suite(n=40, seed=3, language="zh").tasks
    assert all(lang.is_chinese(t.question) for t in only_chinese)


def test_tables_are_translated_when_shown_and_left_as_they_are():
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame([{"rule": "r", "status": "active"}], index=pd.Index(["a"], name="task"))
    shown = lang.translated(table, "zh")
    assert list(shown.columns) == ["规则", "状态"] and shown.index.name == "任务"
    assert list(table.columns) == ["rule", "status"], "the table itself keeps its labels (code indexes them)"
    assert shown.iloc[0, 1] == "active", "data stays as it is"
    assert lang.translated(table, "en") is table
    series = lang.translated(table["status"], "zh")
    assert series.name == "状态" and series.index.name == "任务" and list(series) == ["active"]


def test_every_label_has_a_translation_in_chinese():
    table = lang.labels("zh")
    assert table, "no labels"
    untranslated = [en for en, zh in table.items() if not zh.strip()]
    assert not untranslated


def test_the_cjk_font_draws_every_chinese_label():
    """The font the Chinese edition uses has a glyph for every character its labels use."""
    from matplotlib import ft2font

    font = ft2font.FT2Font(str(lang.cjk_font_path()))
    text = (
        "".join(lang.labels("zh").values())
        + "最近个任务的滑动平均半衰期天后过时过期距上次命中的天数衰减系数记忆"
    )
    missing = sorted({ch for ch in text if lang.is_chinese(ch) and font.get_char_index(ord(ch)) == 0})
    assert not missing, f"no glyph for {missing}"


def test_a_chinese_plot_draws_without_a_missing_glyph(no_setting, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    monkeypatch.setenv("RALPH_LANG", "zh")
    saved = dict(matplotlib.rcParams)
    try:
        lang.setup()
        from ralph_mini.widgets.plots import plot_decay, plot_learning_curve

        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*missing from font.*")
            for figure in (plot_decay(), plot_learning_curve({"bare ReAct": [3, 2, 2]}, [1, 1, 1])):
                figure.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # as Jupyter shows it
                texts = [t.get_text() for t in figure.findobj(matplotlib.text.Text)]
                assert any(lang.is_chinese(t) for t in texts), texts
    finally:
        matplotlib.rcParams.update(saved)


def test_labels_file_is_one_flat_table():
    raw = json.loads(lang.LABELS_FILE.read_text(encoding="utf-8"))
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items())
