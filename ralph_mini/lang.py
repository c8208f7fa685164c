"""The reader's language, English or Chinese (中文), in every lesson from notebook 01 on: its edition.

The kit has two editions built from the same sources: ``notebooks/`` and ``exercises/`` in English,
``notebooks/zh/`` and ``exercises/zh/`` in Chinese. Their code cells are the same, so the code cannot
say which edition runs it; the setting does:

- ``RALPH_LANG=zh`` (or ``en``) in the environment, if set;
- else a file named ``.ralph_lang`` in the kernel's working folder or a folder above it: Jupyter starts
  a notebook's kernel in the notebook's folder, and ``notebooks/zh/`` and ``exercises/zh/`` hold one
  that says ``zh``;
- else English.

What changes with the language is only what a reader reads: headings and labels a notebook prints
(``tr``), table column and row labels (``setup`` translates them when a table is shown, so code still
indexes ``table["correct"]``), plot labels, the exercises' feedback, and the questions of worlds that
have Chinese phrasings. The package's data, its lessons and its prompts stay as they are.

Left out on purpose: more languages (the tables are per language, so one more is one more table).
"""

import json
import os
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh")
MARKER = ".ralph_lang"  # a file whose text is a language code: the edition of the notebooks beside it
LABELS_FILE = Path(__file__).resolve().parent / "data" / "labels_zh.json"
CJK_FONT = "Noto Sans CJK SC"  # from the PyPI package noto-cjk-sans-otc (OFL), pinned in requirements.txt


def current() -> str:
    """The language in force here and now: RALPH_LANG, else the nearest ``.ralph_lang``, else English."""
    chosen = os.environ.get("RALPH_LANG", "").strip() or marker_language(Path.cwd())
    return checked(chosen or "en")


def marker_language(folder: Path) -> str:
    """The language named by the nearest ``.ralph_lang`` in ``folder`` or above it ('' if none)."""
    for place in (folder, *folder.parents):
        marker = place / MARKER
        if marker.is_file():
            return marker.read_text(encoding="utf-8").strip()
    return ""


def checked(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r}: use one of {', '.join(LANGUAGES)} (RALPH_LANG or {MARKER})")
    return language


def tr(en: str, zh: str, language: str | None = None) -> str:
    """The text in the reader's language: ``print(tr("correct answers", "正确答案"))``."""
    return zh if checked(language or current()) == "zh" else en


def is_chinese(text: str) -> bool:
    """Written in Chinese: has a CJK ideograph (how a world's phrasings are told apart, no table needed)."""
    return any("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in text)


def in_language(texts: tuple[str, ...] | list[str], language: str | None) -> tuple[int, ...]:
    """Positions of ``texts`` written in ``language``; every position when language is None or none is."""
    if language is None:
        return tuple(range(len(texts)))
    wanted = checked(language) == "zh"
    positions = tuple(i for i, text in enumerate(texts) if is_chinese(text) == wanted)
    return positions or tuple(range(len(texts)))


@cache
def labels(language: str) -> dict[str, str]:
    """English label -> its translation, for tables and plots (empty for English)."""
    if checked(language) == "en":
        return {}
    return json.loads(LABELS_FILE.read_text(encoding="utf-8"))


def label(text: str, language: str | None = None) -> str:
    """One label (a column name, an arm, a plot's axis) in the reader's language; unknown ones as they are."""
    return labels(language or current()).get(text, text) if isinstance(text, str) else text


def translated(frame, language: str | None = None):
    """A copy of a pandas table with its column and row labels (and their names) translated."""
    language = language or current()
    if not labels(language):
        return frame

    def word(x):
        return label(x, language)

    if hasattr(frame, "columns"):  # a DataFrame
        shown = frame.rename(index=word, columns=word)
        shown.columns = shown.columns.set_names([word(n) for n in shown.columns.names])
    else:  # a Series: its row labels, and its name
        shown = frame.rename(index=word).rename(word(frame.name))
    shown.index = shown.index.set_names([word(n) for n in shown.index.names])
    return shown


def setup(language: str | None = None) -> str:
    """A notebook's first cell: show tables and plots in the reader's language; returns that language.

    In Chinese: every pandas table is translated when Jupyter shows it (the table itself is unchanged),
    and matplotlib draws Chinese with a CJK font. In English it changes nothing."""
    language = checked(language or current())
    if language == "zh":
        translate_tables_when_shown(language)
        use_cjk_font()
    return language


def translate_tables_when_shown(language: str) -> None:
    """Register Jupyter display formatters for pandas tables (by name: pandas loads only when used)."""
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing is shown, nothing to translate
        return
    shell = get_ipython()
    if shell is None:
        return
    formatters = shell.display_formatter.formatters
    # pandas 3 names its classes' module "pandas"; older releases "pandas.core.frame" and so on
    for module, kind in (("pandas", "DataFrame"), ("pandas", "Series"),
                         ("pandas.core.frame", "DataFrame"), ("pandas.core.series", "Series")):  # fmt: skip
        formatters["text/html"].for_type_by_name(module, kind, lambda frame: html_of(frame, language))
        formatters["text/plain"].for_type_by_name(
            module, kind, lambda frame, printer, cycle: printer.text(repr(translated(frame, language)))
        )


def html_of(frame, language: str) -> str | None:
    """A table's HTML with translated labels (a Series has none: Jupyter shows its text)."""
    shown = translated(frame, language)
    return shown._repr_html_() if hasattr(shown, "_repr_html_") else None


def cjk_font_path() -> Path:
    """The CJK font file the kit ships with (a PyPI package, so every install has it)."""
    from noto_cjk_sans_otc import FONT_PATH

    return Path(str(FONT_PATH))


def use_cjk_font() -> None:
    """matplotlib: Latin letters as in the English edition, Chinese from the CJK font.

    Why a second *family*, not a second name in ``font.sans-serif``: matplotlib falls back glyph by
    glyph across the families of ``font.family``, but takes only the first font a generic family names."""
    import matplotlib
    from matplotlib import font_manager

    path = str(cjk_font_path())
    if not any(f.fname == path for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(path)
    matplotlib.rcParams["font.family"] = ["sans-serif", CJK_FONT]
