# %% [markdown]
# # 03 · The reflector: from a log to rules
#
# **What you will build:** a *reflector* that reads the compact log of a run and writes lessons the
# agent can follow next time, held to a fixed template so it cannot get away with saying nothing.
#
# The seed article learned two things the hard way: fed the whole chat transcript, a reflector gives
# vague advice; fed the compact step log of notebook 02, it names tools and fields. And a fixed template
# (four sections, each item at most 30 words) stops it from filling the page with nothing.
#
# **The reflector knows no answers**: it reads the run's log, the grader's verdict line (which fields
# were rejected, never their right values) and the tools in its prompt. Its rules come out in the
# **micro-prompt grammar** (`ralph_mini/rules.py`), a controlled English that a real model reads as a
# plain sentence and the offline model can parse.
#
# <!-- zh -->
# # 03 · 反思器：从日志到规则
#
# **你将构建：** 一个*反思器*（reflector），它读取一次运行的紧凑日志，写出智能体下次可以遵循的经验；它受一个固定模板约束，没法用空话敷衍过去。
#
# 原文吃了苦头才学到两件事：喂给它整段聊天记录，反思器给出的是含糊的建议；喂给它笔记本 02 的紧凑步骤日志，它会点出具体的工具和字段。而一个固定模板（四个部分，每一项最多 30 个词）能防止它用空话填满页面。
#
# **反思器不知道任何答案**：它读的是这次运行的日志、评分器的判定行（哪些字段被拒绝，但从不给出正确的值）以及提示词里的工具。它的规则用**微提示语法**（micro-prompt grammar，`ralph_mini/rules.py`）写成：这是一种受控英语，真实模型把它当作普通句子来读，离线模型则能解析它。

# %%
from ralph_mini import grade, lang, model_from_env, run_react
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.planner import review
from ralph_mini.reflect import (
    ask_untemplated,
    reflect,
    reflection_messages,
    reflection_text,
    validate_reflection,
)
from ralph_mini.worlds import orders

LANGUAGE = lang.setup()  # "en" or "zh": the edition's language, for printed text, tables and questions
model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7, language=LANGUAGE)
words = orders.WORDS  # the order desk's words: the reflector's prompt and checks read them
tools = suite.world.tools()
task = suite.tasks[1]  # B456: pending, created 12 minutes ago
wasteful = run_react(task, model, tools)
calls, wrong, seconds = wasteful.tool_calls, wasteful.wrong_calls, wasteful.latency_s
print(
    task.question,
    lang.tr(
        f"-> {calls} calls, {wrong} wrong, {seconds:.1f} s virtual",
        f"-> {calls} 次调用，{wrong} 次错误，虚拟 {seconds:.1f} 秒",
    ),
)

# %% [markdown]
# ## Without a template, from the transcript
#
# Hand the reflector the raw transcript (every message of the run, system prompt included) and ask how
# the agent could do better:
#
# <!-- zh -->
# ## 没有模板，从对话记录出发
#
# 把原始对话记录（这次运行的每条消息，包括系统提示词）交给反思器，问它智能体怎样才能做得更好：

# %%
transcript = "\n".join(f"{m['role']}: {m.get('content') or m.get('tool_calls')}" for m in wasteful.messages)
print(lang.tr(f"transcript: {len(transcript)} characters\n", f"对话记录: {len(transcript)} 个字符\n"))
advice = ask_untemplated(transcript, model)
print(advice)

# %% [markdown]
# True, and useless: nothing in it tells the agent what to do differently with *this* kind of order.
#
# ## With the template, from the log
#
# Now the compact log: one line per step, then the result, then the grader's verdict line that the
# loop appends (`reflect.reflection_text`). With the tool descriptions in its prompt, this is everything
# the reflector reads:
#
# <!-- zh -->
# 说得没错，但毫无用处：里面没有一句话告诉智能体，遇到*这一类*订单时应该换成什么做法。
#
# ## 使用模板，从日志出发
#
# 现在换成紧凑日志：每步一行，然后是结果，然后是循环追加的评分器判定行（`reflect.reflection_text`）。再加上提示词里的工具描述，这就是反思器读到的全部内容：

# %%
verdict = grade(task, wasteful.answer)
log_text = reflection_text(wasteful, "R002", verdict.correct, verdict)
print(log_text)

# %% [markdown]
# **From scratch: the template check and the re-ask.** The prompt (`reflect.reflection_messages`) asks
# for four sections, each item a line "- ..." of at most 30 words naming a tool or a field. The check
# splits the reply into sections and lists what breaks the template; such a reply is sent back with the
# reasons, within `rounds` attempts, then no reflection rather than garbage.
#
# <!-- zh -->
# **从零开始：模板检查与重新询问。** 提示词（`reflect.reflection_messages`）要求四个部分，每一项是一行 "- ..."，最多 30 个词，并点出一个工具或字段的名字。检查会把回复拆分成各个部分，并列出所有违反模板之处；这样的回复会连同原因一起被退回，最多尝试 `rounds` 次，之后宁可没有反思，也不要垃圾。

# %%
# from scratch: the template check and the re-ask
SECTIONS = ["EFFECTIVE STEPS", "INEFFECTIVE STEPS", "REUSABLE RULES", "AVOID"]
NAMES = [t.name for t in tools] + [*words.fields, words.id_argument]  # what a specific item names


def check(text, max_words=30):
    """The reply's sections, and every way it breaks the template ([] means valid)."""
    sections, current = {}, None
    for line in (raw.strip() for raw in text.splitlines()):
        if line.endswith(":") and line[:-1].upper() in SECTIONS:
            current = line[:-1].upper()
            sections[current] = []
        elif line.startswith("- ") and current and line[2:].lower() != "none":
            sections[current].append(line[2:])
    problems = [f"missing section {name}" for name in SECTIONS if name not in sections]
    for name, items in sections.items():
        for item in items:
            if len(item.split()) > max_words:
                problems.append(f"{name}: item has {len(item.split())} words, over {max_words}")
            if not any(known in item.lower() for known in NAMES):
                problems.append(f"{name}: vague item names no tool or field: '{item}'")
    return sections, problems


def reflect_by_hand(log_text, model, max_words=30, rounds=2):
    messages = reflection_messages(log_text, tools, words, max_words)  # the template prompt, the log
    for _ in range(rounds):
        text = model.complete(messages, []).content or ""
        sections, problems = check(text, max_words)
        if not problems:
            return sections
        reask = f"Your reply breaks the template: {'; '.join(problems)}. Reply again, in the template only."
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": reask}]
    return None  # no reflection rather than garbage


print(lang.tr("the untemplated advice:", "无模板的建议:"), check(advice)[1], "\n")
for title, items in reflect_by_hand(log_text, model).items():
    print(title + ":", *[f"- {item}" for item in items], sep="\n")

# %% [markdown]
# **The package's version: `reflect.reflect`** (its check is `validate_reflection`): the same sections
# and items. It checks more: the sections' order, at least one step named, every rule in the micro-prompt
# grammar (kept in canonical form), no item naming one order, customer, amount or time. A rule written
# for order B456 passes the hand check and fails the package's twice:
#
# <!-- zh -->
# **包里的版本：`reflect.reflect`**（它的检查是 `validate_reflection`）：得到的部分和条目相同。它检查得更多：各部分的顺序、至少点名一个步骤、每条规则都符合微提示语法（并保持规范形式）、没有任何条目点名某一个具体的订单、顾客、金额或时间。一条为订单 B456 写的规则能通过手写检查，却两次违反包的检查：

# %%
reflection = reflect(log_text, model, tools, words)
as_sections = {
    "EFFECTIVE STEPS": list(reflection.effective),
    "INEFFECTIVE STEPS": list(reflection.ineffective),
    "REUSABLE RULES": list(reflection.rules),
    "AVOID": list(reflection.avoid),
}
rounds, tokens = reflection.rounds, reflection.tokens
print(lang.tr(f"rounds: {rounds}, reflection tokens: {tokens}", f"轮数: {rounds}，反思 token: {tokens}"))
print(
    lang.tr("same sections as by hand:", "与手写版相同的段落:"),
    as_sections == reflect_by_hand(log_text, model),
)
special = "\n".join(
    ["EFFECTIVE STEPS:", "- query_local_cache gave status", "INEFFECTIVE STEPS:", "- none"]
    + ["REUSABLE RULES:", "- when order B456 is pending: skip query_payment_api", "AVOID:", "- none"]
)
print(lang.tr("by hand:", "手写版:"), check(special)[1])
print(
    lang.tr("package:", "包的版本:"),
    *validate_reflection(special, words, [t.name for t in tools]),
    sep="\n- ",
)

# %% [markdown]
# Every item comes from the log alone. A step is *effective* when it brought a field the answer used;
# *ineffective* when it failed, only repeated known fields, or found nothing. A repeat gives "when P
# finds the order: skip T"; useless calls before the first effective tool give "when any task: start
# with E". The "30 min" comes from the log (the order was 12 minutes old when the provider had nothing)
# and the payment tool's declared role in the prompt ("learns of an order 30 min after it is created").
#
# <details><summary>When the grader rejects an answer</summary>
#
# The verdict line names the rejected fields. The reflector then looks for a tool whose description
# speaks of the status it saw and that was never called ("when status is W ...: call T").
#
# </details>
#
# ## A template violation, rejected and asked again
#
# Tighten the limit to 10 words an item. The first reply breaks it; the reflector is told exactly what
# is wrong, and its second reply keeps only what fits. `max_reflection_rounds` bounds the attempts:
#
# <!-- zh -->
# 每一项都只来自日志。一个步骤，如果带回了答案用到的字段，就是*有效的*；如果失败了、只重复了已知的字段、或者什么也没找到，就是*无效的*。一次重复会得出 "when P finds the order: skip T"；第一个有效工具之前的无用调用会得出 "when any task: start with E"。"30 min" 来自日志（服务商什么也没有时，订单才创建了 12 分钟），以及提示词中支付工具声明的角色（"learns of an order 30 min after it is created"）。
#
# <details><summary>当评分器拒绝一个答案时</summary>
#
# 判定行会点出被拒绝的字段。这时反思器会寻找这样一个工具：它的描述提到了所看到的状态，而且从未被调用过（"when status is W ...: call T"）。
#
# </details>
#
# ## 违反模板：被拒绝，然后重新询问
#
# 把限制收紧到每项 10 个词。第一次回复违反了限制；反思器被明确告知哪里不对，它的第二次回复只保留符合限制的内容。`max_reflection_rounds` 限定了尝试的次数：

# %%
short = reflect(log_text, model, tools, words, max_words=10)
print(lang.tr("round 1 rejected because:", "第 1 轮被拒，原因:"), short.rejections[0][:300], "...\n")
heading = lang.tr(
    f"round {short.rounds}: ok={short.ok}; rules:", f"第 {short.rounds} 轮: ok={short.ok}；规则:"
)
print(heading, *short.rules, sep="\n- ")
print(
    lang.tr("\nby hand, same rules:", "\n手写版，规则相同:"),
    reflect_by_hand(log_text, model, max_words=10)["REUSABLE RULES"] == list(short.rules),
)

# %% [markdown]
# At 4 words no item fits. The reflector returns *no reflection* with the reason, never garbage. Here
# the two checks differ: the second reply has every section, each "- none"; the hand check accepts
# that empty template, the package's refuses it (it must name at least one step):
#
# <!-- zh -->
# 限制为 4 个词时，没有任何一项放得下。反思器返回*没有反思*并给出原因，从不返回垃圾。这里两种检查出现了分歧：第二次回复包含所有部分，每部分都是 "- none"；手写检查接受了这个空模板，包的检查则拒绝它（它必须至少点名一个步骤）：

# %%
nothing = reflect(log_text, model, tools, words, max_words=4, max_reflection_rounds=2)
print(nothing.ok, "|", nothing.reason[:160])
print(lang.tr("by hand:", "手写版:"), reflect_by_hand(log_text, model, max_words=4, rounds=2))

# %% [markdown]
# ## The fast loop's quick review
#
# A reflection is for *next time*. Within a run, the Ralph Loop uses a cheaper check, the quick review
# (`review.quick_review`, called by `planner.review` with what the world says): from what the agent can
# see (no grader), it counts wrong and redundant calls and judges the answer *complete*: it has the task
# type's answer fields (here `status`), and a "not_found" rests on a look-up that answered. It also
# notes whether the run wrote (`wrote`) and an answer made with no look-up at all (`blind`).
#
# It asks for a retry only when the answer is not complete (none at all, because the run hit
# `max_steps` or `max_pitfall_depth`, or one lacking the type's fields) *and* the run wrote nothing.
# Then the *fast loop* reflects on that run at once ("grader: not graded") and runs the task again with
# the rules, all runs of the task sharing one pitfall budget (notebook 06 shows it firing).
#
# Here the answer is complete, so no retry. After grading, the *slow loop* decides whether to reflect
# for memory (`learn.wants_slow_loop`): always when the grader rejected the answer; on waste like this
# run's when the task type recurs or the same error repeats; never on a clean run, nor on an accepted
# answer made with no look-up (it showed nothing).
#
# <!-- zh -->
# ## 快循环的快速复查
#
# 反思是为了*下一次*。在一次运行之内，Ralph 循环使用一种更便宜的检查：快速复查（`review.quick_review`，由 `planner.review` 带上世界所提供的信息来调用）。它只依据智能体能看到的东西（没有评分器），统计错误调用和冗余调用，并判断答案是否*完整*：答案含有该任务类型的答案字段（这里是 `status`），并且一个 "not_found" 要以一次有回应的查询为依据。它还会记下这次运行是否写入过（`wrote`），以及是否有完全没做查询就给出的答案（`blind`）。
#
# 只有当答案不完整（根本没有答案，因为运行撞上了 `max_steps` 或 `max_pitfall_depth`；或者答案缺少该类型的字段），*并且*这次运行没有写入任何东西时，它才会要求重试。这时*快循环*会立即对这次运行进行反思（"grader: not graded"），并带着规则重新运行这个任务，该任务的所有运行共用一份陷阱预算（笔记本 06 会展示它触发的情形）。
#
# 这里答案是完整的，所以不重试。评分之后，*慢循环*决定是否为记忆进行反思（`learn.wants_slow_loop`）：评分器拒绝答案时，总是反思；遇到像这次运行这样的浪费，当任务类型反复出现或同样的错误重复出现时反思；干净的运行从不反思，没做任何查询就被接受的答案也不反思（它什么也没展示）。

# %%
review(task, wasteful, tools, words)

# %% [markdown]
# ## Apply the rules: the same task, then the same fifty tasks
#
# The rules go into the system prompt under "Lessons from earlier runs". The model is the same, with
# the same habits; it only reads a longer prompt.
#
# <!-- zh -->
# ## 应用规则：先是同一个任务，再是同样的五十个任务
#
# 规则放进系统提示词的 "Lessons from earlier runs" 标题之下。模型还是同一个，习惯也一样；它只是读到了更长的提示词。

# %%
again = run_react(task, model, tools, lessons=reflection.rules)
for step in again.steps:
    print(f"{step.index}. {step.thought}\n   {step.tool}({step.arguments}) -> {step.status}")
before_calls, after_calls, correct = wasteful.tool_calls, again.tool_calls, record(again).correct
print(
    lang.tr(
        f"\n{before_calls} calls before, {after_calls} after; answer correct: {correct}",
        f"\n之前 {before_calls} 次调用，之后 {after_calls} 次；答案正确: {correct}",
    )
)

# %% [markdown]
# ## What changed: one reflection, fifty tasks
#
# One reflection on one run of one order, applied to all fifty tasks of notebook 01:
#
# <!-- zh -->
# ## 有何变化：一次反思，五十个任务
#
# 对一个订单的一次运行所做的一次反思，应用到笔记本 01 的全部五十个任务上：

# %%
import pandas as pd

from ralph_mini.widgets import progress

bare = [record(t) for t in run_suite(suite.tasks, model, tools, progress=progress)]
before = summarize(bare, lang.tr("bare ReAct", "裸 ReAct"))
with_rules = run_suite(suite.tasks, model, tools, lessons=reflection.rules, progress=progress)
after = summarize(
    [record(t) for t in with_rules], lang.tr("bare ReAct + 1 reflection", "裸 ReAct + 1 次反思")
)
pd.DataFrame([before, after]).set_index("agent").T

# %% [markdown]
# Calls per task fall from 2.82 to 1.64 (the oracle needs 1.52), wrong calls from 17 to 0, and every
# answer stays correct. Where the rest of the gap is, by kind of order:
#
# <!-- zh -->
# 每个任务的调用数从 2.82 降到 1.64（oracle 需要 1.52），错误调用从 17 次降到 0 次，而每个答案仍然正确。按订单类型来看，剩下的差距在哪里：

# %%
pd.DataFrame(by_kind([record(t) for t in with_rules])).set_index("kind")

# %% [markdown]
# Every kind is at the oracle except orders that do not exist (3 calls where 2 do): this one run never
# showed the reflector a missing order, so it could not write a rule for one. That is why the Ralph
# Loop reflects on many runs and keeps what it learns in a *memory*: notebook 04.
#
# <!-- zh -->
# 除了不存在的订单（用了 3 次，而 2 次就够），每一类都达到了 oracle 的水平：这一次运行从没让反思器见过一个不存在的订单，所以它写不出针对这种订单的规则。这就是为什么 Ralph 循环要对许多次运行进行反思，并把学到的东西保存在*记忆*里：笔记本 04。
