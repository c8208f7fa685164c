"""ralph_mini: from a bare ReAct agent to a Ralph Loop that learns from its own runs.

Modules, in the order the notebooks teach them: model, rules, tools, order_words, world, suite,
offline, backends, hardening, react, measure (01), log (02), reflect (03), clock, lesson_guards,
memory, memory_file (04), embed, retrieval (05), loop and bench (06); widgets and exercise are
imported from their packages (they pull in matplotlib and ipywidgets). faiss is loaded only when a
vector index is built, so ``import ralph_mini`` stays light.
"""

from ralph_mini.backends import model_from_env
from ralph_mini.bench import run_agent
from ralph_mini.clock import FakeClock
from ralph_mini.embed import Embedder, HashingEmbedder
from ralph_mini.log import append_run, load_log, log_run
from ralph_mini.loop import LoopConfig, TaskResult, run_loop, run_task
from ralph_mini.measure import run_suite, summarize
from ralph_mini.memory import Experience, Memory, MemoryConfig
from ralph_mini.memory_file import MemoryFile, journal
from ralph_mini.model import ChatModel, ModelError, ModelReply, OpenAIModel, ToolCall, Usage, count_tokens
from ralph_mini.offline import Habits, OfflineModel
from ralph_mini.react import Step, Trace, build_system_prompt, run_react
from ralph_mini.reflect import Reflection, quick_review, reflect, validate_reflection
from ralph_mini.retrieval import Retriever, VectorIndex, select_within_budget
from ralph_mini.rules import Rule, RuleSyntaxError, find_rules, parse_rule
from ralph_mini.suite import Suite, Task, grade, make_suite
from ralph_mini.tools import NotFound, Tool, tool
from ralph_mini.world import Order, OrderWorld

__all__ = [
    "ChatModel",
    "Embedder",
    "Experience",
    "FakeClock",
    "Habits",
    "HashingEmbedder",
    "LoopConfig",
    "Memory",
    "MemoryConfig",
    "MemoryFile",
    "ModelError",
    "ModelReply",
    "NotFound",
    "OfflineModel",
    "OpenAIModel",
    "Order",
    "OrderWorld",
    "Reflection",
    "Retriever",
    "Rule",
    "RuleSyntaxError",
    "Step",
    "Suite",
    "Task",
    "TaskResult",
    "Tool",
    "ToolCall",
    "Trace",
    "Usage",
    "VectorIndex",
    "append_run",
    "build_system_prompt",
    "count_tokens",
    "find_rules",
    "grade",
    "journal",
    "load_log",
    "log_run",
    "make_suite",
    "model_from_env",
    "parse_rule",
    "quick_review",
    "reflect",
    "run_agent",
    "run_loop",
    "run_react",
    "run_suite",
    "run_task",
    "select_within_budget",
    "summarize",
    "tool",
    "validate_reflection",
]
