"""Build the two word lists the instance filter ships as package data (``ralph_mini/instance_shapes.py``).

    apt-get install wamerican                        # Debian's word list, SCOWL size 50
    pip download --no-deps --no-binary :all: -d /tmp/jieba jieba==0.42.1
    tar xzf /tmp/jieba/jieba-0.42.1.tar.gz -C /tmp/jieba
    python tools/build_word_lists.py --jieba /tmp/jieba/jieba-0.42.1/jieba/dict.txt

- ``ralph_mini/data/english_words.txt.gz``: every entry of ``/usr/share/dict/american-english`` (Debian's
  ``wamerican`` 2020.12.07-2, Kevin Atkinson's SCOWL at size 50, a permissive licence) except the
  possessives ("Bob's"), one a line, case kept: 'bob' (an ordinary word) and 'Bob' (a proper noun) are
  two entries. 74,744 entries, about 205 KB gzipped. The filter reads a lower-case entry as "an
  ordinary English word" and a capitalised one as "can be a proper noun"; nobody picked a name.
- ``ralph_mini/data/han_words.txt.gz``: the two-character words of jieba 0.42.1's ``dict.txt`` (MIT)
  that start with one of the filter's common surname characters and are not tagged as a person's name
  (POS nr*): 严重, 许多, 黄色, 马上 ... so that '严重的延误' is not read as a person called 严重.

Both files are written deterministically (sorted, gzip mtime 0): rebuilding from the same sources gives the
same bytes. Run from the repository root.
"""

import argparse
import gzip
from pathlib import Path

from ralph_mini.instance_shapes import HAN_SURNAMES

DATA = Path(__file__).resolve().parents[1] / "ralph_mini" / "data"


def english_entries(dictionary: Path) -> list[str]:
    """The dictionary's entries minus possessives, sorted: ['A', 'AA', ..., 'bob', ..., 'Bob', ...]."""
    words = {line.strip() for line in dictionary.read_text("utf-8").splitlines()}
    return sorted(w for w in words if w and "'" not in w)


def han_entries(jieba_dict: Path) -> list[str]:
    """Two-character words starting with a surname character that jieba does not tag as a name."""
    found = set()
    for line in jieba_dict.read_text("utf-8").splitlines():
        parts = line.split()
        if (
            len(parts) == 3
            and len(parts[0]) == 2
            and parts[0][0] in HAN_SURNAMES
            and not parts[2].startswith("nr")
        ):
            found.add(parts[0])
    return sorted(found)


def write_gzip(path: Path, lines: list[str]) -> None:
    with (
        path.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as out,
    ):
        out.write(("\n".join(lines) + "\n").encode("utf-8"))
    print(f"{path.relative_to(DATA.parents[1])}: {len(lines)} entries, {path.stat().st_size} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dictionary", type=Path, default=Path("/usr/share/dict/american-english"))
    parser.add_argument("--jieba", type=Path, required=True, help="jieba 0.42.1's jieba/dict.txt")
    args = parser.parse_args()
    write_gzip(DATA / "english_words.txt.gz", english_entries(args.dictionary))
    write_gzip(DATA / "han_words.txt.gz", han_entries(args.jieba))


if __name__ == "__main__":
    main()
