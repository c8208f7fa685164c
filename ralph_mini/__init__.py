"""ralph_mini: from a bare ReAct agent to a Ralph Loop that learns from its own runs.

Modules, in the order the notebooks teach them: model, rules, offline, tools, world, react.
"""

from ralph_mini.model import ChatModel, ModelError, ModelReply, OpenAIModel, ToolCall, Usage, count_tokens
from ralph_mini.offline import Habits, OfflineModel, model_from_env
from ralph_mini.react import Step, Trace, build_system_prompt, run_react
from ralph_mini.rules import Rule, RuleSyntaxError, find_rules, parse_rule
from ralph_mini.tools import NotFound, Tool, tool
from ralph_mini.world import Order, OrderWorld, Suite, Task, grade, make_suite

__all__ = [
    "ChatModel",
    "Habits",
    "ModelError",
    "ModelReply",
    "NotFound",
    "OfflineModel",
    "OpenAIModel",
    "Order",
    "OrderWorld",
    "Rule",
    "RuleSyntaxError",
    "Step",
    "Suite",
    "Task",
    "Tool",
    "ToolCall",
    "Trace",
    "Usage",
    "build_system_prompt",
    "count_tokens",
    "find_rules",
    "grade",
    "make_suite",
    "model_from_env",
    "parse_rule",
    "run_react",
    "tool",
]
