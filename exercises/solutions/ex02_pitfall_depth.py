"""Reference solution for exercises/ex02_pitfall_depth.ipynb (instructor only)."""

from ralph_mini.react import WRONG_STATUSES


def should_stop(statuses: list[str], max_pitfall_depth: int) -> str | None:
    """A reason to stop when there are more wrong calls than max_pitfall_depth, else None.

    ['error', 'ok', 'bad_args'], 1 -> 'max_pitfall_depth: 2 wrong calls'
    """
    wrong = sum(1 for status in statuses if status in WRONG_STATUSES)
    if wrong > max_pitfall_depth:  # at the limit the run may go on; only *more* stops it
        return f"max_pitfall_depth: {wrong} wrong calls"
    return None
