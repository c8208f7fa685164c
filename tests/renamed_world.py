"""A parcel depot: the order desk's shape with every word renamed, built only on the public API.

Why: the agent claims to know no world. This world has the order desk's *roles* (notebook 01) and none
of its words, so a loop that learns here learns from roles, not from names (``test_renamed_world.py``).
It is also a whole world in one module: words, data, tools, tasks and the simulated model's habits.

    order desk                        parcel depot
    order, order_id, A123             parcel, tracking_code, PX-4821
    query_local_cache                 peek_depot_shelf      fast, misses parcels off the shelf
    query_database                    read_ledger           holds every parcel (holds_every=True)
    query_payment_api                 ask_clearing_house    hears of a parcel 30 min late (lag_min=30)
    get_shipping_status               track_courier         look-alikes (core=False)
    get_order_history                 list_sender_parcels
    search_docs                       browse_handbook
    calculator                        abacus
    send_email                        post_notice           writes
    refund_order                      reverse_charge        writes
    paid, pending, refunded           settled, on_hold, reversed
    payment_failed, not_found         bounced, untraced
    status, created_at                state, opened_on      (status_field, created_field)
    amount, paid_at, txn_id           fee, settled_on, clearing_ref
    payment_status, settled_at        clearing, cleared_on  (captured/declined: cleared/rejected)
    payment_method                    tender
    request type "status"             "whereabouts"

So the order desk's naive habits exist here too: the model double-checks the ledger after a shelf hit,
asks the clearing house about every parcel on hold and about parcels that do not exist, and sometimes
starts with a look-alike tool.

Left out on purpose: more than one request type (the clinic has three), and writes the grader checks.
"""

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ralph_mini.offline_habits import LookUp, RequestHabit, Seen, fields_of, habits_for, picked
from ralph_mini.tools import NotFound, Tool, tool
from ralph_mini.world import TIME_FORMAT, RequestType, Suite, Task, Words

# --- words ---------------------------------------------------------------------------------------
SHELF = "peek_depot_shelf"  # fast shelf scanner (0.05 s): only parcels on the shelf
LEDGER = "read_ledger"  # the depot's ledger (0.8 s): every parcel
CLEARING_HOUSE = "ask_clearing_house"  # slow third party (6 s), hears of a parcel CLEARING_LAG_MIN late
COURIER, SENDER, HANDBOOK, ABACUS = "track_courier", "list_sender_parcels", "browse_handbook", "abacus"
NOTICE, REVERSE = "post_notice", "reverse_charge"  # they write
LOOKUPS = (SHELF, LEDGER, CLEARING_HOUSE)  # what a whereabouts question is about
READ_ONLY = (*LOOKUPS, COURIER, SENDER, HANDBOOK, ABACUS)

STATES = ("settled", "on_hold", "reversed", "bounced", "untraced")
WAITING = ("on_hold",)  # the clearing house may know more than the ledger
MISSING = "untraced"  # the answer for a parcel that does not exist
FIELDS = ("state", "fee", "settled_on", "opened_on", "clearing_ref", "clearing", "cleared_on", "tender")
WHEREABOUTS = "whereabouts"  # the one request type

QUESTIONS = (
    "Where does parcel {id} stand?",
    "Is parcel {id} settled yet? Give its state and fee.",
    "A sender asks about parcel {id}: what state is it in?",
    "Look into parcel {id} and report its state and fee.",
    "What is the state of parcel {id}?",
)
PROMPT = """You are the counter assistant of a parcel depot.
Current time: {now}.

Answer the question about one parcel. Use the tools, one call at a time, and read each result.
States are: settled, on_hold, reversed, bounced, untraced. If the clearing house reports
clearing=cleared, the parcel is settled; rejected means bounced.
When you know the answer, reply without a tool call and end with one line:
Final answer: {{"tracking_code": "...", "state": "...", "fee": 0.0, "settled_on": "...", "clearing_ref": "..."}}
Leave out the fields you do not know."""

WORDS = Words(
    job="a parcel-depot agent: it tells senders where their parcels stand",
    noun="parcel",
    id_argument="tracking_code",
    id_pattern=r"(?<![A-Za-z0-9])((?i:px)-\d{4})(?![0-9])",
    statuses=STATES,
    missing=MISSING,
    requests=(RequestType(WHEREABOUTS, answer_fields=("state",), phrasings=QUESTIONS),),
    fields=FIELDS,
    status_field="state",
    created_field="opened_on",
    id_formats={
        "tracking code": r"\b(?i:px)-\d{4}\b",
        "sender": r"\bSND-\d+\b",
        "clearing ref": r"\bCLR-\d+\b",
    },
)

# --- data ----------------------------------------------------------------------------------------
NOW = datetime(2025, 8, 4, 15, 0)
CLEARING_LAG_MIN = 30
KINDS = {  # share of each kind of parcel in a suite
    "shelved": 0.30,  # on the shelf: one call answers it
    "ledger_only": 0.14,  # off the shelf: the ledger
    "reversed": 0.10,  # ledger only
    "held_fresh": 0.16,  # on hold, opened minutes ago: the clearing house knows nothing yet
    "held_stale": 0.16,  # on hold long ago: the clearing house knows the truth
    "missing": 0.14,  # no such parcel anywhere
}


@dataclass(frozen=True)
class Parcel:
    """One parcel as the depot and the clearing house know it."""

    code: str
    kind: str
    state: str  # what the depot's own records say
    fee: float
    opened_on: datetime
    shelved: bool
    settled_on: datetime | None = None
    tender: str = "card"
    clearing: str | None = None  # cleared | rejected | returned; None: the clearing house has nothing
    clearing_ref: str | None = None
    cleared_on: datetime | None = None


def stamp(moment: datetime | None) -> str | None:
    return moment.strftime(TIME_FORMAT) if moment else None


def random_parcel(rng: random.Random, code: str, kind: str) -> Parcel:
    fee = round(rng.uniform(5, 400) * 2) / 2
    tender = rng.choice(["card", "card", "cash", "voucher"])
    opened = NOW - timedelta(minutes=rng.randint(40, 3 * 24 * 60))
    if kind == "held_fresh":
        opened = NOW - timedelta(minutes=rng.randint(2, CLEARING_LAG_MIN - 5))
    if kind == "held_stale":
        opened = NOW - timedelta(minutes=rng.randint(CLEARING_LAG_MIN + 15, 600))
    settled, ref = opened + timedelta(minutes=rng.randint(1, 5)), f"CLR-{rng.randint(10000, 99999)}"
    if kind in ("shelved", "ledger_only", "reversed"):
        state, clearing = ("reversed", "returned") if kind == "reversed" else ("settled", "cleared")
        return Parcel(
            code, kind, state, fee, opened, kind == "shelved", settled, tender, clearing, ref, settled
        )
    if kind == "held_stale":
        clearing = "cleared" if rng.random() < 0.7 else "rejected"
        return Parcel(code, kind, "on_hold", fee, opened, True, None, tender, clearing, ref, settled)
    if kind == "held_fresh":
        return Parcel(code, kind, "on_hold", fee, opened, True, tender=tender)
    return Parcel(code, "missing", MISSING, 0.0, opened, False)


@dataclass
class Depot:
    """All parcels by tracking code, and what the writing tools did; a ``world.World``."""

    parcels: dict[str, Parcel]
    side_effects: list[str] = field(default_factory=list)
    words: Words = WORDS
    _tools: list[Tool] = field(default_factory=list, init=False, repr=False, compare=False)

    def tools(self, core_only: bool = False) -> list[Tool]:
        self._tools = self._tools or make_tools(self)
        return [t for t in self._tools if t.core] if core_only else list(self._tools)

    def card(self, parcel: Parcel) -> dict:
        """What the shelf and the ledger show of a parcel."""
        shown = {"state": parcel.state, "fee": parcel.fee, "opened_on": stamp(parcel.opened_on)}
        return shown | ({"settled_on": stamp(parcel.settled_on)} if parcel.settled_on else {})


# --- tools: the order desk's roles, declared ----------------------------------------------------------
def make_tools(depot: Depot) -> list[Tool]:
    @tool(latency_s=0.05, statuses=STATES)
    def peek_depot_shelf(tracking_code: str) -> dict:
        """The shelf scanner at the counter: fast, shows state, fee and times of parcels on the shelf.
        Parcels off the shelf are not shown.

        Args:
            tracking_code: The parcel's tracking code, for example "PX-4821".
        """
        parcel = depot.parcels.get(tracking_code)
        if parcel is None or not parcel.shelved:
            raise NotFound(f"parcel {tracking_code} is not on the shelf")
        return depot.card(parcel)

    @tool(latency_s=0.8, statuses=STATES, holds_every=True)
    def read_ledger(tracking_code: str) -> dict:
        """The depot's ledger: every parcel ever handed in, with its tender. Slower.

        Args:
            tracking_code: The parcel's tracking code, for example "PX-4821".
        """
        parcel = depot.parcels.get(tracking_code)
        if parcel is None or parcel.kind == "missing":
            raise NotFound(f"parcel {tracking_code} is not in the ledger")
        return depot.card(parcel) | {"tender": parcel.tender}

    @tool(latency_s=6.0, lag_min=CLEARING_LAG_MIN)
    def ask_clearing_house(tracking_code: str) -> dict:
        """The clearing house (slow). It hears of a parcel about 30 minutes after the parcel is opened;
        use it to settle a parcel on_hold for longer than that.

        Args:
            tracking_code: The parcel's tracking code, for example "PX-4821".
        """
        parcel = depot.parcels.get(tracking_code)
        if parcel is None or parcel.clearing is None:
            raise NotFound(f"the clearing house has no record of parcel {tracking_code}")
        return {"clearing": parcel.clearing, "clearing_ref": parcel.clearing_ref,
                "cleared_on": stamp(parcel.cleared_on)}  # fmt: skip

    @tool(latency_s=0.6, core=False)
    def track_courier(tracking_code: str) -> dict:
        """Which courier carries a parcel, and on which leg it is (not its state at the depot).

        Args:
            tracking_code: The parcel's tracking code, for example "PX-4821".
        """
        parcel = depot.parcels.get(tracking_code)
        if parcel is None or parcel.kind == "missing":
            raise NotFound(f"no courier carries parcel {tracking_code}")
        return {"courier": "Swiftline", "leg": "delivered" if parcel.state == "settled" else "at_depot"}

    @tool(latency_s=0.9, core=False)
    def list_sender_parcels(sender_id: str) -> dict:
        """Every parcel one sender handed in, newest first.

        Args:
            sender_id: The sender's id, for example "SND-0042".
        """
        raise NotFound(f"no sender {sender_id}")

    @tool(latency_s=0.4, core=False)
    def browse_handbook(phrase: str) -> dict:
        """Search the depot's handbook (fees, opening hours, lost parcels).

        Args:
            phrase: Words to search for.
        """
        return {"best_match": "Fees: a parcel's fee is charged when it is handed in."}

    @tool(latency_s=0.01, core=False)
    def abacus(formula: str) -> dict:
        """Work out simple arithmetic such as "12.5 * 3".

        Args:
            formula: Digits, + - * / and parentheses only.
        """
        if not set(formula) <= set("0123456789.+-*/() ") or "**" in formula:
            raise ValueError(f"abacus takes digits and + - * / ( ) only, got {formula[:60]!r}")
        return {"result": eval(formula, {"__builtins__": {}})}  # charset checked above

    @tool(latency_s=0.3, core=False, writes=True)
    def post_notice(recipient: str, heading: str, text: str) -> dict:
        """Post a notice to a sender.

        Args:
            recipient: The sender's address.
            heading: The notice's heading.
            text: The notice's text.
        """
        depot.side_effects.append(f"notice to {recipient}: {heading}")
        return {"posted": True}

    @tool(latency_s=1.0, core=False, writes=True)
    def reverse_charge(tracking_code: str) -> dict:
        """Reverse a parcel's fee. This moves money: never use it to look something up.

        Args:
            tracking_code: The parcel's tracking code.
        """
        depot.side_effects.append(f"charge reversed for {tracking_code}")
        return {"reversal_requested": True}

    return [peek_depot_shelf, read_ledger, ask_clearing_house, track_courier, list_sender_parcels,
            browse_handbook, abacus, post_notice, reverse_charge]  # fmt: skip


# --- tasks: the questions, their truth, the oracle's calls ---------------------------------------------
def truth(parcel: Parcel) -> dict:
    """What a correct answer says, after the clearing house's word where it is needed."""
    if parcel.kind == "missing":
        return {"state": MISSING}
    if parcel.kind == "held_stale":
        if parcel.clearing == "cleared":
            return {"state": "settled", "fee": parcel.fee, "settled_on": stamp(parcel.cleared_on),
                    "clearing_ref": parcel.clearing_ref}  # fmt: skip
        return {"state": "bounced", "fee": parcel.fee}
    answer = {"state": parcel.state, "fee": parcel.fee}
    return answer | ({"settled_on": stamp(parcel.settled_on)} if parcel.state == "settled" else {})


def oracle_calls(parcel: Parcel) -> int:
    """The shelf, then what is missing: the ledger on a shelf miss, the clearing house for a stale hold."""
    return {"shelved": 1, "held_fresh": 1, "held_stale": 2}.get(parcel.kind, 2)


def make_suite(n: int = 50, seed: int = 7) -> Suite:
    """A depot and ``n`` seeded whereabouts questions: same ``seed``, same tasks on every machine."""
    rng, parcels, tasks = random.Random(seed), {}, []
    for number in range(1, n + 1):
        code = f"PX-{rng.randint(1000, 9999)}"
        while code in parcels:
            code = f"PX-{rng.randint(1000, 9999)}"
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        parcel = parcels[code] = random_parcel(rng, code, kind)
        phrasing = rng.randrange(len(QUESTIONS))
        tasks.append(Task(
            task_id=f"T{number:03d}", question=QUESTIONS[phrasing].format(id=code), task_type=WHEREABOUTS,
            expected=truth(parcel), oracle_calls=oracle_calls(parcel), prompt=PROMPT.format(now=stamp(NOW)),
            now=stamp(NOW), relevant_tools=LOOKUPS, kind=kind, record_id=code, phrasing=phrasing,
        ))  # fmt: skip
    return Suite(world=Depot(parcels), tasks=tasks)


# --- how the simulated model acts here ------------------------------------------------------------------
def whereabouts_answer(seen: Seen) -> dict:
    """Merge what the shelf and the ledger said (the ledger last); on a parcel on hold the clearing
    house's word wins: cleared is settled, rejected is bounced."""
    found = picked(seen.found_fields(), ("state", "fee", "settled_on"), numbers=("fee",))
    answer = {"tracking_code": seen.record_id} | found
    answer.setdefault("state", MISSING)
    house = fields_of(seen, CLEARING_HOUSE)
    if house and answer["state"] in WAITING:
        if house.get("clearing") == "cleared":
            answer.update(
                state="settled", settled_on=house.get("cleared_on"), clearing_ref=house.get("clearing_ref")
            )
        elif house.get("clearing") == "rejected":
            answer["state"] = "bounced"
    return answer


WHEREABOUTS_HABIT = RequestHabit(
    moves=(LookUp(thorough=True),),  # double-check, ask the clearing house about held and missing parcels
    answer=whereabouts_answer,
    tempted_by=(COURIER, SENDER, HANDBOOK),  # they sound right
)
HABITS = habits_for(WORDS, Depot(parcels={}).tools(), {WHEREABOUTS: WHEREABOUTS_HABIT}, waiting=WAITING)
