"""@tool builds the schema from hints and the Args: docstring, refuses to guess, and validates calls."""

import pytest

from ralph_mini.tools import BadArguments, ToolDefinitionError, compress_observation, read_fields, tool


@tool(latency_s=0.25, core=False)
def loyalty_points(customer_id: str, year: int = 2025) -> dict:
    """Loyalty points of a customer.

    Args:
        customer_id: The customer id, e.g. "CUST-1".
        year: Which year to count.
    """
    return {"customer_id": customer_id, "points": 10 * year}


def test_schema_from_hints_and_docstring():
    assert loyalty_points.schema() == {
        "type": "function",
        "function": {
            "name": "loyalty_points",
            "description": "Loyalty points of a customer.",
            "parameters": {
                "type": "object",
                "properties": {
                    "customer_id": {"type": "string", "description": 'The customer id, e.g. "CUST-1".'},
                    "year": {"type": "integer", "description": "Which year to count."},
                },
                "required": ["customer_id"],
            },
        },
    }
    assert loyalty_points.latency_s == 0.25 and loyalty_points.core is False


def test_call_validates():
    assert loyalty_points(customer_id="C", year=2) == {"customer_id": "C", "points": 20}
    with pytest.raises(
        BadArguments, match="unexpected argument 'id': loyalty_points takes customer_id, year"
    ):
        loyalty_points(id="C")
    with pytest.raises(BadArguments, match="missing argument 'customer_id'"):
        loyalty_points(year=1)
    with pytest.raises(BadArguments, match="'year' must be a integer, got str"):
        loyalty_points(customer_id="C", year="2025")
    with pytest.raises(BadArguments, match="must be a integer, got bool"):
        loyalty_points(customer_id="C", year=True)


def test_refuses_missing_hint():
    with pytest.raises(ToolDefinitionError, match="'x' of tool 'f' has no type hint"):

        @tool
        def f(x) -> dict:
            """Doc.

            Args:
                x: something
            """


def test_refuses_unsupported_type():
    with pytest.raises(ToolDefinitionError, match="supports only str, int, float and bool"):

        @tool
        def g(ids: list[str]) -> dict:
            """Doc.

            Args:
                ids: ids
            """


def test_refuses_undocumented_argument():
    with pytest.raises(ToolDefinitionError, match="add 'order_id: ...' under Args:"):

        @tool
        def h(order_id: str) -> dict:
            """No args section."""


def test_compress_observation():
    data = {"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}
    assert compress_observation(data) == "3 fields: status=paid, amount=99.5, paid_at=2025-03-10 09:13"
    assert compress_observation(data, max_fields=1) == "3 fields: status=paid (+2 more)"


def test_read_fields_hands_out_a_fresh_dict_each_time():
    # The parse is remembered per observation: changing one reading must not change the next.
    observation = "ok: 2 fields: status=paid, amount=99.5"
    fields = read_fields(observation)
    fields["status"] = "refunded"
    assert read_fields(observation) == {"status": "paid", "amount": "99.5"}
