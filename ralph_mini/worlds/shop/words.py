"""The wider shop's words: task types, how customers ask (English and Chinese), and the prompt (notebook 09).

Why a second words module: notebook 01's order desk (``order_words.py``) answers one kind of question,
asked in five English templates, so lessons never had to be kept per task type and retrieval never met
wording it had not stored. This shop, in the spirit of tau-bench's retail domain, also takes refunds
(under a written policy), "was I charged twice?", delivery questions and cancellations; two of them
*write*. Customers ask in English and in Chinese written as people write it (no spaces, the id right next
to the characters, sometimes in lower case).

``HELD_OUT`` phrasings never appear in a task the loop learns from: they are asked only in test windows
(``scenarios.py``), so retrieval is measured on wording it never stored.

Left out on purpose: the data and the tools (``world.py``), the task generator (``tasks.py``) and the
simulated model's habits here (``habits.py``). The tools it shares with the order desk keep their
names (``worlds/orders/words.py``).
"""

from ralph_mini.world import RequestType, Words
from ralph_mini.worlds.orders import words as ow

# --- the two tools the order desk does not have ------------------------------------------------------
TRANSACTIONS = "list_transactions"  # every charge the payment provider holds for an order (1.5 s)
CANCEL_ORDER = "cancel_order"  # cancels an order: it writes
SHOP_TOOLS = (TRANSACTIONS, CANCEL_ORDER)

# --- task types ------------------------------------------------------------------------------------
STATUS, REFUND, CHARGES, DELIVERY, CANCEL = "status", "refund", "charges", "delivery", "cancel"
TASK_TYPES = (STATUS, REFUND, CHARGES, DELIVERY, CANCEL)
WRITING_TYPES = (REFUND, CANCEL)  # graded on the world's final state as well as the answer

# Words that tell a request's type apart, checked in this order; a question with none is about status.
# The offline model reads the type this way (a real model reads it from the sentence).
TYPE_WORDS = {
    CANCEL: ("cancel", "stop order", "call off", "取消", "撤销", "不要了", "不想要"),
    REFUND: ("refund", "money back", "退款", "退钱", "退掉"),
    CHARGES: ("twice", "two charges", "more than once", "double", "two times", "两次", "重复扣款", "两笔"),
    DELIVERY: ("parcel", "deliver", "shipping", "arrive", "package", "track", "快递", "发货", "送到", "物流"),
}

# --- how customers ask -----------------------------------------------------------------------------
# Per type: English, then Chinese; the phrasings in HELD_OUT are asked only in test windows.
PHRASINGS = {
    STATUS: (
        "What is the status of order {id}?",
        "Has order {id} been paid? Please give the status and the amount.",
        "A customer asks about order {id}: what is its payment status?",
        "Check order {id} and report its status and amount.",
        "Where does payment for order {id} stand?",
        "Could you tell me whether order {id} went through?",
        "订单{id}的支付状态是什么？",
        "{id}这个订单付款了吗？",
        "帮我查一下订单{id}的状态和金额",
        "请问{id}号订单现在是什么状态？",
    ),
    REFUND: (
        "Please refund order {id}.",
        "I want my money back for order {id}.",
        "Can I get a refund on order {id}?",
        "Refund order {id} for the customer, if the policy allows it.",
        "Order {id} was a mistake, I'd like a refund please.",
        "Could you process a refund for {id}?",
        "订单{id}申请退款",
        "请帮我把订单{id}退款",
        "{id}能退款吗？",
        "我要退掉{id}这笔订单的钱",
    ),
    CHARGES: (
        "Was I charged twice for order {id}?",
        "I see two charges for order {id} on my card. Is that right?",
        "Did you bill me twice for order {id}?",
        "Check whether order {id} was charged more than once.",
        "My bank shows a double payment for {id}, can you check?",
        "Was the payment for order {id} taken two times?",
        "订单{id}是不是扣了两次款？",
        "{id}这个订单重复扣款了吗？",
        "订单{id}被收了两次钱吗",
        "我的卡上{id}订单有两笔扣款，怎么回事？",
    ),
    DELIVERY: (
        "Where is my parcel for order {id}?",
        "Has order {id} been delivered yet?",
        "What is the shipping status of order {id}?",
        "When will order {id} arrive?",
        "Is the package for order {id} on its way?",
        "Track order {id} for me please.",
        "订单{id}的快递到哪了？",
        "{id}发货了吗？",
        "订单{id}什么时候送到？",
        "帮我查查{id}的物流",
    ),
    CANCEL: (
        "Please cancel order {id}.",
        "I want to cancel order {id}.",
        "Cancel my order {id}, I changed my mind.",
        "Can order {id} still be cancelled?",
        "Stop order {id}, I don't want it any more.",
        "Call off order {id} please.",
        "取消订单{id}",
        "订单{id}帮我取消掉",
        "{id}这个订单我不要了，请取消",
        "{id}的订单不想要了，撤销吧",
    ),
}
ENGLISH = (0, 1, 2, 3, 4, 5)  # positions in each PHRASINGS tuple
CHINESE = (6, 7, 8, 9)
HELD_OUT = (4, 5, 9)  # two English and one Chinese phrasing per type: test windows only
LOWER_CASE_SHARE = 0.25  # ids written in lower case ("order d012")

# --- the agent's prompt ----------------------------------------------------------------------------
SHOP_PROMPT = """You are the customer-service assistant of an online shop.
Current time: {now}.

Handle the customer's request about one order. Use the tools, one call at a time, and read each result.
Order statuses are: paid, pending, refunded, payment_failed, not_found. If the payment provider reports
payment_status=captured, the order is paid; declined means payment_failed.
Refund policy: refund only a paid order, within {refund_days} days of its payment, and never twice.
Cancellation policy: cancel only a pending order whose payment the provider has not captured.
When you are done, reply without a tool call and end with one line, with the fields of the request:
- status: Final answer: {{"order_id": "...", "status": "...", "amount": 0.0, "paid_at": "...", "txn_id": "."}}
- refund: Final answer: {{"order_id": "...", "refund": "done" or "refused"}}
- charged twice?: Final answer: {{"order_id": "...", "charged_twice": "yes" or "no", "charges": 0}}
- delivery: Final answer: {{"order_id": "...", "shipping_status": "...", "carrier": "..."}}
- cancellation: Final answer: {{"order_id": "...", "cancel": "done" or "refused"}}
Leave out the fields you do not know."""
REFUND_DAYS_RE = r"within (\d+) days of its payment"  # how a reader finds the window in the prompt
DONE, REFUSED, YES, NO = "done", "refused", "yes", "no"
SHIPPING_STATES = ("delivered", "in_transit", "not_shipped", "not_found")

# --- the words, for the agent --------------------------------------------------------------------------
ANSWERS = {STATUS: ("status",), REFUND: ("refund",), CHARGES: ("charged_twice",),
           DELIVERY: ("shipping_status",), CANCEL: ("cancel",)}  # fmt: skip
FIELDS = (*ow.FIELDS, "charges", "txn_ids", "carrier", "shipping_status", "refund_requested", "cancelled")
# The default request first, then the others in the order their cue words are checked.
WORDS = Words(
    job="the customer-service agent of an online shop: status, refunds, charges, delivery, cancellations",
    noun="order",
    id_argument="order_id",
    id_pattern=ow.ORDER_ID_IN_TEXT,
    statuses=ow.STATUSES,
    missing=ow.MISSING,
    created_field="created_at",
    requests=tuple(
        RequestType(kind, ANSWERS[kind], PHRASINGS[kind], TYPE_WORDS.get(kind, ()), kind in WRITING_TYPES)
        for kind in (STATUS, *TYPE_WORDS)
    ),
    fields=FIELDS,
    id_formats=ow.INSTANCE_PATTERNS,
)
