"""Fake models shared by the tests (imported as ``from fakes import ScriptedModel``, like ``openai_stub``)."""

from ralph_mini.model import ModelReply


class ScriptedModel:
    """Replies from a script, in order, whatever it is asked; records every conversation it was sent.

    A plain string is a text reply. Running out of script is an error that says so, not an IndexError.
    """

    def __init__(self, *replies: ModelReply | str):
        self.replies = [r if isinstance(r, ModelReply) else ModelReply(r) for r in replies]
        self.seen: list[list[dict]] = []

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        if not self.replies:
            raise AssertionError(f"ScriptedModel ran out of replies after {len(self.seen)} calls")
        self.seen.append([dict(m) for m in messages])
        return self.replies.pop(0)
