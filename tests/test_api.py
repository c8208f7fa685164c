"""The public API is pinned: a change to ``__all__`` is a decision, made here on purpose."""

import subprocess
import sys

import ralph_mini

PUBLIC = [
    "ChatModel", "Embedder", "Experience", "FakeClock", "Grade", "Habits", "HashingEmbedder", "LookUp",
    "LoopConfig", "Memory", "MemoryConfig", "MemoryFile", "ModelError", "ModelReply", "Move", "NotFound",
    "OfflineModel", "OpenAIModel", "Reflection", "RequestHabit", "RequestType", "Retriever", "Review", "Rule",
    "RuleSyntaxError", "Step", "Task", "TaskResult", "Tool", "ToolCall", "Trace", "Usage", "VectorIndex",
    "Words", "World", "append_run", "build_system_prompt", "count_tokens", "find_rules", "grade",
    "habits_for", "journal", "load_log", "log_run", "model_from_env", "parse_rule", "quick_review",
    "reflect", "run_agent", "run_loop", "run_react", "run_suite", "run_task", "select_within_budget",
    "summarize", "tool", "validate_reflection",
]  # fmt: skip


def test_all_is_pinned_and_importable():
    assert ralph_mini.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(ralph_mini, name) is not None


def test_import_is_light_and_reads_no_environment():
    """Importing the package builds no client, reads no key, and leaves the heavy UI libraries alone."""
    code = (
        "import os, sys; os.environ['OPENAI_API_KEY']='sk-should-not-be-read'; import ralph_mini; "
        "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'openai') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
