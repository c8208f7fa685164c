"""A worked example at the order desk, for a model without tool calls (notebook 08, ``json_tools``).

Played in as earlier turns before the real question: a cache miss, then the database, then the answer,
about another order id and with other values, so copying them is visibly wrong. It was measured the
best setting for the bundled Gemma 3 270M (``benchmarks/local_llm.py``).
"""

import json

from ralph_mini.worlds.orders import words


def example_call(number: int, tool: str, order_id: str) -> dict:
    arguments = json.dumps({"order_id": order_id})
    return {"id": f"example_{number}", "type": "function",
            "function": {"name": tool, "arguments": arguments}}  # fmt: skip


EXAMPLE = [
    {"role": "user", "content": "What is the status of order Z999?"},
    {"role": "assistant", "content": None, "tool_calls": [example_call(1, words.CACHE, "Z999")]},
    {"role": "tool", "tool_call_id": "example_1",
     "content": "not_found: order Z999 is not in the local cache"},
    {"role": "assistant", "content": None, "tool_calls": [example_call(2, words.DATABASE, "Z999")]},
    {"role": "tool", "tool_call_id": "example_2", "content": "ok: 4 fields: status=refunded, amount=12.5, "
     "created_at=2025-03-01 08:00, payment_method=card"},
    {"role": "assistant", "content": '{"final_answer": {"order_id": "Z999", "status": "refunded", '
     '"amount": 12.5}}'},  # the JSON the model is asked to write
]  # fmt: skip
