"""Compare the outputs of two builds of a notebook, ignoring only what honestly varies.

    python tools/compare_notebooks.py OLD.ipynb NEW.ipynb

Used when the package is reshaped with behaviour unchanged: rebuild a notebook from its source to a
temporary path and compare it with the committed one. Widget model ids, execution counts and PNG bytes
(matplotlib embeds no timestamp, but font caches may differ) are ignored; every text output counts.
Exit 1 and a cell-by-cell diff when they differ.
"""

import argparse
import difflib
import sys

import nbformat

IGNORED = ("application/vnd.jupyter.widget-view+json", "image/png")


def outputs(path: str) -> list[list[str]]:
    notebook = nbformat.read(path, as_version=4)
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for output in cell.get("outputs", []):
            if "text" in output:
                texts.append(f"{output.get('name', '')}: {output['text']}")
            for mime, value in sorted(output.get("data", {}).items()):
                if mime not in IGNORED:
                    texts.append(f"{mime}: {value if isinstance(value, str) else ''.join(value)}")
        cells.append(texts)
    return cells


def main(old: str, new: str) -> int:
    a, b = outputs(old), outputs(new)
    if a == b:
        print(f"identical outputs: {new}")
        return 0
    for number, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            print(f"cell {number} differs:")
            before, after = "\n".join(x).splitlines(), "\n".join(y).splitlines()
            print("\n".join(difflib.unified_diff(before, after, lineterm="")))
    if len(a) != len(b):
        print(f"{len(a)} code cells before, {len(b)} after")
    return 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the committed notebook")
    parser.add_argument("new", help="the rebuilt one")
    arguments = parser.parse_args()
    sys.exit(main(arguments.old, arguments.new))
