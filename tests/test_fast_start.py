"""The first cell opens fast (issue 27): what an import loads, not how long it takes.

Each check runs in a fresh interpreter, because modules this test process already imported would
hide what an import pulls in. The time itself is printed by ``tools/import_time.py`` (a timing in a
test would fail on a busy machine, not on a regression); these tests pin the causes: notebook 01's
first cell loads neither pandas, nor ipywidgets, nor matplotlib, nor the memory or the loop, and the
widgets package loads each view's dependencies only when the view is used. Then notebook 05's speed
lesson, reshaped to hold its vectors once (``tools/notebook_times.py`` prints its peak memory): the
same vectors however they are chunked, and the exact top k it grades against.
"""

import json
import mmap
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from ralph_mini import vector_speed
from ralph_mini.vector_speed import clustered_unit_vectors, merged_top_k, top_k_of_chunk

ROOT = Path(__file__).resolve().parent.parent
HEAVY = (
    "pandas",
    "matplotlib",
    "ipywidgets",
    "tqdm.notebook",
    "faiss",
    "ralph_mini.memory",
    "ralph_mini.loop",
)


def loaded_after(code: str) -> list[str]:
    """The HEAVY modules loaded after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT / "notebooks"
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_widgets_loads_no_memory_loop_or_view_library():
    assert loaded_after("import ralph_mini.widgets") == []


def test_the_names_notebook_01_imports_load_nothing_heavy():
    """``progress`` and ``show_trace`` are imported by the first cell; their libraries load when used."""
    assert loaded_after("from ralph_mini.widgets import progress, show_trace, trace_text") == []


def test_notebook_01s_first_cell_loads_nothing_heavy():
    notebook = nbformat.read(ROOT / "notebooks" / "01_bare_react.ipynb", as_version=4)
    first = next(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert loaded_after(first) == []


def test_the_bench_command_loads_numpy_only_for_an_arm_that_searches_vectors():
    """``python -m ralph_mini bench --tasks 20`` (notebook 07 starts it four times) searches no vectors."""
    probe = "import sys, ralph_mini.__main__, ralph_mini.bench\nprint('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr


def test_the_learning_curve_does_not_load_the_memory():
    """``bench`` draws its curve from the command line: matplotlib, not the memory."""
    assert loaded_after("from ralph_mini.widgets.plots import plot_learning_curve") == ["matplotlib"]


def test_a_view_loads_its_library_when_used():
    """The other side of laziness: the stepper still gets ipywidgets, the decay plot the memory."""
    stepper = (
        "from ralph_mini.widgets import TraceStepper\n"
        "from ralph_mini.worlds import orders\n"
        "from ralph_mini import model_from_env, run_react\n"
        "suite = orders.make_suite(n=1, seed=7)\n"
        "trace = run_react(suite.tasks[0], model_from_env(habits=orders.HABITS), suite.world.tools())\n"
        "TraceStepper(trace)"
    )
    assert "ipywidgets" in loaded_after(stepper)
    assert "ralph_mini.memory" in loaded_after("from ralph_mini.widgets import plot_decay; plot_decay()")


def test_a_terminal_progress_bar_loads_no_notebook_widget():
    assert loaded_after("from ralph_mini.widgets import progress; list(progress(range(3)))") == []


# --- notebook 05's speed lesson: vectors drawn side by side, held once, graded chunk by chunk -------


def test_a_chunk_drawn_again_from_its_recipe_is_the_same_in_any_order(monkeypatch):
    """Both passes draw the chunks side by side; each chunk draws its rows from its own seed."""
    monkeypatch.setattr(vector_speed, "CHUNK", 700)
    chunks = vector_speed.clustered_chunks(2500, 8, np.random.default_rng(5))
    assert [(c.start, len(c.labels)) for c in chunks] == [(0, 700), (700, 700), (1400, 700), (2100, 400)]
    side_by_side = np.full((2500, 8), np.nan, dtype=np.float32)
    vector_speed.draw_into(side_by_side, chunks)
    one_by_one = [chunk.vectors() for chunk in reversed(chunks)][::-1]
    assert np.array_equal(side_by_side, np.concatenate(one_by_one))  # every row drawn, each as alone
    assert np.allclose(np.linalg.norm(side_by_side, axis=1), 1, atol=1e-6)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a page given back reads as zeros on Linux")
def test_a_chunk_given_back_frees_the_whole_pages_under_it_and_no_other():
    """The IVF index has copied a chunk: its pages go back to the system (and read as zeros if touched
    again); a page the chunk shares with a row not yet filed must stay."""
    memory = vector_speed.private_memory(8 * mmap.PAGESIZE)  # as the lesson's vectors are held
    matrix = np.frombuffer(memory, dtype=np.float32).reshape(-1, 256)  # rows of 1 kB
    matrix[:] = 1
    per_page = mmap.PAGESIZE // 1024
    vector_speed.give_back(memory, matrix, slice(1, 3 * per_page + 1))  # from inside page 0 into page 3
    assert (matrix[per_page : 3 * per_page] == 0).all()  # pages 1 and 2: wholly the chunk's, given back
    assert (matrix[:per_page] == 1).all() and (matrix[3 * per_page :] == 1).all()  # shared pages kept
    vector_speed.give_back(memory, matrix, slice(3 * per_page + 1, 3 * per_page + 2))  # within one page
    assert (matrix[3 * per_page :] == 1).all()
    del matrix


def test_the_vectors_are_seeded():
    first, again = (clustered_unit_vectors(1500, 8, np.random.default_rng(seed)) for seed in (5, 5))
    other = clustered_unit_vectors(1500, 8, np.random.default_rng(6))
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_the_grading_chunk_by_chunk_finds_the_exact_top_k_best_first(monkeypatch):
    """Each chunk's own top k, merged, is the top k of all the rows: a sort of every score."""
    monkeypatch.setattr(vector_speed, "CHUNK", 700)  # chunks of 700, 700, 700 and 400 (the last short)
    rng = np.random.default_rng(1)
    chunks = vector_speed.clustered_chunks(2500, 16, rng)
    matrix, probes = np.concatenate([c.vectors() for c in chunks]), clustered_unit_vectors(45, 16, rng)
    expected = np.argsort(-(probes @ matrix.T), axis=1, kind="stable")[:, :3]
    per_chunk = [top_k_of_chunk(probes, c.vectors(), c.start, 3) for c in chunks]
    assert np.array_equal(merged_top_k(per_chunk, 3), expected)


def test_numpy_finds_each_vector_the_list_faiss_would_file_it_under():
    """The lesson finds the IVF lists with numpy, on every core, and has faiss store the vectors there."""
    import faiss

    rng = np.random.default_rng(2)
    vectors = clustered_unit_vectors(3000, 16, rng)
    centroids = vectors[rng.choice(3000, 256, replace=False)]  # as the lesson's: a sample of the vectors
    quantizer = faiss.IndexFlatIP(16)
    quantizer.add(centroids)
    assert np.array_equal(vector_speed.nearest_lists(vectors, centroids), quantizer.assign(vectors, 1)[:, 0])


def test_a_tie_goes_to_the_lower_id_across_chunks():
    probe, row = np.array([[1.0, 0.0]], dtype=np.float32), np.array([[1.0, 0.0]], dtype=np.float32)
    per_chunk = [top_k_of_chunk(probe, np.vstack([row * 0.5, row]), 0, 1),
                 top_k_of_chunk(probe, np.vstack([row, row]), 2, 1)]  # fmt: skip
    assert merged_top_k(per_chunk[::-1], 2).tolist() == [[1, 2]]  # score 1.0 at ids 1, 2 and 3
