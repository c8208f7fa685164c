"""The order desk's words: tool names, statuses, id formats, question templates and prompt text (notebook 01).

Why one module: the agent loop, the reflector, memory's guards and the exercises are *generic*; the
order desk is not. Everything that spells it (a tool name, a status, what an order id looks like, how
a customer asks) lives here, and reaches the agent as one ``Words`` record (``WORDS``), the contract of
``ralph_mini/world.py``. So a student sees at a glance what is "the world" and what is "the agent", and
a new world is one new package like this one (``docs/your_own_world.md``).

Left out on purpose: the data (orders, latencies, the settlement lag) and the tools' code, which are
in ``world.py``; the simulated model's habits here, in ``habits.py``.
"""

from ralph_mini.world import RequestType, Words

# --- tools ---------------------------------------------------------------------------------------
CACHE = "query_local_cache"  # fast local cache of recent orders (0.05 s)
DATABASE = "query_database"  # the shop's order database (0.8 s)
PAYMENT = "query_payment_api"  # the third-party payment provider (6 s)
SHIPPING = "get_shipping_status"
HISTORY = "get_order_history"
DOCS = "search_docs"
CALCULATOR = "calculator"
EMAIL = "send_email"
REFUND = "refund_order"

LOOKUP_TOOLS = (CACHE, DATABASE, PAYMENT)  # the three read-only lookups an order-status answer needs
EXTENDED_TOOLS = (SHIPPING, HISTORY, DOCS, CALCULATOR, EMAIL, REFUND)  # listed, never needed for status
READ_ONLY_TOOLS = (*LOOKUP_TOOLS, SHIPPING, HISTORY, DOCS, CALCULATOR)
WRITING_TOOLS = (EMAIL, REFUND)  # they change the world: a lesson must never steer the agent to them

# --- answers -------------------------------------------------------------------------------------
STATUSES = ("paid", "pending", "refunded", "payment_failed", "not_found")
WAITING = ("pending",)  # a status in which the payment provider may know more than the shop's records
MISSING = "not_found"  # the answer for an order that does not exist
ANSWER_FIELDS = ("order_id", "status", "amount", "paid_at", "txn_id")
# Every field name the tools return (a useful reflection item mentions a tool or one of them).
FIELDS = ("status", "amount", "paid_at", "created_at", "txn_id", "payment_status", "settled_at",
          "payment_method")  # fmt: skip

# --- this world's own id formats (lesson_guards.py adds the generic ones: amounts, dates, names, ...) ---
ORDER_ID_PATTERN = r"\b[A-Z]\d{3}\b"  # A123
# An order id as it appears in running text: one letter and three digits, in either case, and possibly
# glued to Chinese characters (订单D012的...), where ``\b`` finds no word boundary.
ORDER_ID_IN_TEXT = r"(?<![A-Za-z0-9])([A-Za-z]\d{3})(?![A-Za-z0-9])"
INSTANCE_PATTERNS = {
    "order id": ORDER_ID_PATTERN,
    "customer": r"\bCUST-\d+\b",
    "transaction": r"\bTXN-\d+\b",
}

# --- how customers ask ---------------------------------------------------------------------------
QUESTIONS = (
    "What is the status of order {id}?",
    "Has order {id} been paid? Please give the status and the amount.",
    "A customer asks about order {id}: what is its payment status?",
    "Check order {id} and report its status and amount.",
    "Where does payment for order {id} stand?",
    # the same questions in Chinese, asked in the Chinese edition (make_suite(language="zh"))
    "订单{id}现在是什么状态？",
    "订单{id}付款了吗？请告诉我状态和金额。",
    "有位顾客问订单{id}：它的支付状态是什么？",
    "帮我查一下订单{id}，报告它的状态和金额。",
    "订单{id}的付款进行到哪一步了？",
)
# (Chinese, the English it translates): the offline model takes the two for one question (habits.py)
TRANSLATIONS = tuple(zip(QUESTIONS[5:], QUESTIONS[:5], strict=True))

# --- the agent's prompt --------------------------------------------------------------------------
SYSTEM_PROMPT = """You are an order-status assistant for an online shop.
Current time: {now}.

Answer the user's question about one order. Use the tools, one call at a time, and read each result.
Statuses are: paid, pending, refunded, payment_failed, not_found. If the payment provider reports
payment_status=captured, the order is paid; declined means payment_failed.
When you know the answer, reply without a tool call and end with one line:
Final answer: {{"order_id": "...", "status": "...", "amount": 0.0, "paid_at": "...", "txn_id": "..."}}
Leave out the fields you do not know."""

# The final-answer line above, as a JSON schema (for models that fill a schema, json_tools.py).
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "status": {"enum": list(STATUSES)},
        "amount": {"type": "number"},
        "paid_at": {"type": "string"},
        "txn_id": {"type": "string"},
    },
    "required": ["order_id", "status"],
    "additionalProperties": False,
}

STATUS = "status"  # the one request type of the order desk
WORDS = Words(
    job="an order-status agent: it answers customers' questions about their orders",
    noun="order",
    id_argument="order_id",
    id_pattern=ORDER_ID_IN_TEXT,
    statuses=STATUSES,
    missing=MISSING,
    created_field="created_at",
    requests=(RequestType(STATUS, answer_fields=("status",), phrasings=QUESTIONS),),
    fields=FIELDS,
    id_formats=INSTANCE_PATTERNS,
    answer_schema=ANSWER_SCHEMA,
)
