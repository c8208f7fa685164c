"""Command line: ``python -m ralph_mini demo`` (bare ReAct, thought by thought),
``python -m ralph_mini bench`` (bare ReAct vs the Ralph Loop, side by side),
``python -m ralph_mini outer`` (the outer loop: the same task file, pass after pass, with stops) and
``python -m ralph_mini serve-local`` (the bundled tiny local model behind an OpenAI-compatible server)."""

import argparse
import os
import sys

from ralph_mini.backends import model_from_env
from ralph_mini.measure import at_least_one
from ralph_mini.model import ModelError
from ralph_mini.react import run_react
from ralph_mini.world import grade
from ralph_mini.worlds import orders


def demo(tasks: int, seed: int, core_only: bool) -> None:
    """Print the trace of each task: thought, tool call, observation, then the graded answer."""
    suite = orders.make_suite(n=max(tasks, 1), seed=seed)
    model = model_from_env(habits=orders.HABITS)
    tools = suite.world.tools(core_only=core_only)
    print(f"model: {model!r}; tools: {', '.join(t.name for t in tools)}\n")
    for task in suite.tasks[:tasks]:
        trace = run_react(task, model, tools)
        print(f"== {task.task_id} [{task.kind}] {task.question}")
        for step in trace.steps:
            print(f"  thought: {step.thought}")
            print(f"  act:     {step.tool}({step.arguments})")
            print(f"  observe: {step.observation}   [{step.status}, {step.tool_latency_s:.2f} s]")
        result = grade(task, trace.answer)
        print(f"  answer:  {trace.answer}")
        print(
            f"  -> {result.explain()}; {trace.tool_calls} calls (oracle {task.oracle_calls}), "
            f"{trace.wrong_calls} wrong, {trace.latency_s:.1f} s virtual\n"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ralph_mini", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo_cmd = commands.add_parser("demo", help="run bare ReAct on a few tasks and print the traces")
    demo_cmd.add_argument("--tasks", type=at_least_one, default=4, help="how many tasks (default 4)")
    demo_cmd.add_argument("--seed", type=int, default=7, help="suite seed (default 7)")
    demo_cmd.add_argument("--core-only", action="store_true", help="show only the 3 core tools")
    commands.add_parser("bench", help="bare ReAct vs the Ralph Loop side by side (--help for options)",
                        add_help=False)  # fmt: skip
    commands.add_parser("outer", help="the outer Ralph loop with its stops (--help for options)",
                        add_help=False)  # fmt: skip
    local_help = "serve the bundled Gemma 3 270M on 127.0.0.1 (needs requirements-local.txt)"
    commands.add_parser("serve-local", add_help=False, help=local_help)
    args, rest = parser.parse_known_args(argv)
    try:
        return run_command(parser, args, rest)
    except ModelError as err:  # the model's server is down, or refused the request: say so, no traceback
        print(f"python -m ralph_mini {args.command}: error: {err}", file=sys.stderr)
        if any(option.split("=")[0] == "--state" for option in rest):
            print("every task finished before it is kept in the --state folder: run the same command with "
                  "--resume once the model answers", file=sys.stderr)  # fmt: skip
        return 1


def run_command(parser: argparse.ArgumentParser, args: argparse.Namespace, rest: list[str]) -> int:
    if args.command == "bench":
        from ralph_mini.bench import main as bench_main

        return bench_main(rest)
    if args.command == "outer":
        from ralph_mini.outer import main as outer_main

        return outer_main(rest)
    if args.command == "serve-local":
        from ralph_mini.local import main as serve_local_main

        return serve_local_main(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    demo(args.tasks, args.seed, args.core_only)
    return 0


def main_quiet_on_a_closed_pipe() -> int:
    """``main``, but a reader that went away (``... | head``) ends the command quietly, as other
    commands end, not with a traceback (the recipe of Python's ``signal`` documentation)."""
    try:
        code = main()
        sys.stdout.flush()  # inside the try: Python's own flush at exit would complain again
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main_quiet_on_a_closed_pipe())
