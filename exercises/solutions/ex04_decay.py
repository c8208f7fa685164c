"""Reference solution for exercises/ex04_decay.ipynb (instructor only)."""


def experience_weight(
    confidence: float,
    days_since_hit: float,
    half_life_days: float = 7.0,
    stale_after_days: float = 14.0,
    stale_factor: float = 0.5,
    expire_after_days: float = 30.0,
) -> float:
    """How much a stored lesson counts today: 0.0 once expired, else decayed (and halved if stale).

    confidence=0.8, days_since_hit=7 -> 0.4; days_since_hit=21 -> 0.8 * 0.125 * 0.5 = 0.05
    """
    if days_since_hit > expire_after_days:  # expired: never retrieved again
        return 0.0
    weight = confidence * 0.5 ** (days_since_hit / half_life_days)
    if days_since_hit > stale_after_days:  # stale: still usable, but trusted less
        weight *= stale_factor
    return weight
