"""How the simulated model acts at the order desk: its naive habits here, as data (notebook 01).

The offline model is generic (``ralph_mini/offline.py``); this is what it "knows" of the order desk:
which tools play which role (read from their ``@tool`` declarations: the cache is the fast source, the
database holds every order, the payment provider lags), that "pending" is the status the provider may
know more about, which extended tools sound right for a status question, and how it reads an answer
off what the tools said. With these habits it double-checks the database after a cache hit, asks the
provider about every pending order and about orders that do not exist, and sometimes starts with a
look-alike tool: the seed article's naive agent.
"""

from ralph_mini.offline_habits import LookUp, RequestHabit, Seen, fields_of, habits_for, picked
from ralph_mini.worlds.orders import words
from ralph_mini.worlds.orders.world import OrderWorld


def status_answer(seen: Seen) -> dict:
    """Merge what the cache and the database said (the database last); on a pending order the payment
    provider's word wins: captured is paid, declined is payment_failed."""
    found = picked(seen.found_fields(), ("status", "amount", "paid_at"), numbers=("amount",))
    answer = {"order_id": seen.record_id} | found
    answer.setdefault("status", words.MISSING)
    provider = fields_of(seen, words.PAYMENT)
    if provider and answer["status"] == "pending":
        if provider.get("payment_status") == "captured":
            answer.update(status="paid", paid_at=provider.get("settled_at"), txn_id=provider.get("txn_id"))
        elif provider.get("payment_status") == "declined":
            answer["status"] = "payment_failed"
    return answer


STATUS_HABIT = RequestHabit(
    moves=(LookUp(thorough=True),),  # habits 1-3: double-check, ask the provider about pending and missing
    answer=status_answer,
    tempted_by=(words.SHIPPING, words.HISTORY, words.DOCS),  # habit 4: they sound right
)
TOOLS = OrderWorld(orders={}).tools()
HABITS = habits_for(
    words.WORDS, TOOLS, {words.STATUS: STATUS_HABIT}, waiting=words.WAITING, twins=words.TRANSLATIONS
)
