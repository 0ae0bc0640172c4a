"""Rule-based procedures: numbered or bulleted imperative steps under a heading, and steps one
speaker lays out in a dialog. Pure and deterministic; conservative on purpose (a chat with no
steps must yield nothing, a list of facts is not a procedure).

A list becomes a procedure when its heading or lead-in names one ("How to ...", "Steps",
"Runbook", "步骤", "流程", "操作手册", ...) and its items are steps (numbered, or mostly
imperative), or, without such a cue, when it has three or more mostly imperative items. Dialog:
one speaker's consecutive turns holding steps numbered 1, 2, 3, ... that are mostly imperative,
right after a how-question or with a cue of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memflow.drafts import ContextPointDraft, EpisodeDraft, ProcedureDraft, StepDraft
from memflow.ids import normalise_text
from memflow.text.document import Chunk, ParsedDocument
from memflow.text.sentences import shorten

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
_NUMBERED = re.compile(
    r"^(?P<indent>\s*)(?:(?:step\s*)?\d{1,2}\s*[.)、:：]|\(\d{1,2}\)|第[一二三四五六七八九十\d]{1,3}步"
    r"\s*[:：,，、.]?|[一二三四五六七八九十]{1,3}\s*[、.．])\s*(?P<text>\S.*)$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*+•·]|\[[ xX]\])\s+(?P<text>\S.*)$")
_LEAD_IN = re.compile(r"^\s*(?P<text>[^:：\n]{1,80}?)\s*[:：]\s*$")
_CUE = re.compile(
    r"\b(?:how\s+(?:to|do|does|should|can|we)|steps?|step[- ]by[- ]step|procedures?|runbooks?|"
    r"run\s+book|playbooks?|checklists?|instructions?|guide|walkthrough|workflow|process|sop)\b|"
    r"步骤|流程|操作手册|手册|指南|如何|怎么|怎样|方法|清单|预案|规程|教程|做法",
    re.IGNORECASE,
)
# Headings that only say "steps" (the procedure's name is then the parent heading).
_GENERIC = re.compile(
    r"^(?:the\s+)?(?:steps?|procedure|instructions?|checklist|how\s+to|process|操作步骤|步骤|"
    r"流程|操作流程|具体步骤|做法)$",
    re.IGNORECASE,
)
_VERBS = frozenset(
    """add apply ask assign back backup build bump call cancel change check choose clean clear
    click close commit compare configure confirm connect contact copy create cut delete deploy
    disable document download drain drop edit email enable ensure enter escalate export fill find
    fix flip follow freeze get give go grant install invalidate keep kill label launch let list
    load lock log login look make mark merge migrate monitor mount move note notify open page
    pause pick ping pin post prepare press promote publish pull purge push put raise re-run read
    reboot record redeploy reload remove rename repeat replace report request reset restart
    restore resume retry revert review rollback roll rotate run save scale schedule select send
    set share ship shut sign skip snapshot start stop submit switch sync tag take tell test turn
    unfreeze unlock unpin update upgrade upload use validate verify wait warm watch wipe write""".split()
)
_ADVERBS = frozenset({"first", "then", "next", "finally", "now", "also", "afterwards", "lastly"})
_ZH_VERBS = (
    "在", "将", "把", "先", "再", "然后", "最后", "接着", "执行", "运行", "检查", "确认", "打开",
    "登录", "停止", "启动", "回滚", "通知", "切换", "部署", "发布", "冻结", "找到", "找出", "记录",
    "观察", "等待", "删除", "创建", "配置", "安装", "更新", "提交", "重启", "备份", "恢复", "验证",
    "使用", "点击", "输入", "选择", "填写", "关闭", "联系", "写", "发送", "申请", "上传", "下载",
    "修改", "设置", "清理", "暂停", "标记", "同步", "复制", "准备", "进入", "拉取", "合并", "打包",
    "监控", "核对", "评估", "撰写", "编写", "召集", "升级", "降级", "迁移", "导出", "导入", "告知",
)  # fmt: skip
_WHEN = re.compile(
    r"\b(?:when|whenever|if|use this|in case|after)\b|当|如果|一旦|出现|发生|适用|时使用|的时候",
    re.IGNORECASE,
)
_WHY = re.compile(r"\b(?:because|so that|to avoid|in order|why)\b|为了|因为|以免|避免|目的", re.I)
_PRE = re.compile(
    r"\b(?:before|requires?|prerequisites?|make sure|you need|must have|needs?)\b|前提|需要先|"
    r"确保|之前|先决|必须",
    re.IGNORECASE,
)
_HOW_QUESTION = re.compile(
    r"\bhow\s+(?:do|does|did|should|can|could|would|to)\b|\bwhat\s+are\s+the\s+steps\b|"
    r"\bwalk\s+me\s+through\b|怎么|如何|怎样|步骤|流程",
    re.IGNORECASE,
)
_INLINE_STEP = re.compile(r"(?:(?<=\s)|^)(?:step\s*)?(\d{1,2})[.)、:]\s+(?=\S)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


@dataclass
class _Item:
    text: str
    numbered: bool


@dataclass
class _List:
    """One run of list items in a text, with where it stood."""

    headings: list[str]  # the heading path above it, outermost first
    lead_in: str | None  # a "Steps:" line right above it
    items: list[_Item] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)  # paragraphs of its section before it


def is_imperative(text: str) -> bool:
    """Does a step read as an instruction (an English verb first, or a Chinese action)?"""
    stripped = text.strip().lstrip("*_`").strip()
    if stripped.startswith(_ZH_VERBS):
        return True
    words = [w.casefold() for w in _WORD.findall(stripped[:80])]
    while words and words[0] in _ADVERBS:
        words = words[1:]
    return bool(words) and words[0] in _VERBS and stripped[:1].isascii()


def _share_imperative(items: Sequence[str]) -> float:
    return sum(is_imperative(t) for t in items) / len(items) if items else 0.0


def _qualifies(cue: bool, items: Sequence[_Item]) -> bool:
    texts = [i.text for i in items]
    numbered = sum(i.numbered for i in items) >= len(items) / 2
    share = _share_imperative(texts)
    if cue:
        return len(items) >= 2 and (share >= 0.5 or (numbered and share >= 0.34))
    return len(items) >= 3 and share >= 0.6


def _lists(text: str) -> list[_List]:
    """The list runs of a text (Markdown or plain), each with its headings and the prose of its
    section and the sections above it."""
    headings: list[tuple[int, str, list[str]]] = [(0, "", [])]  # level, heading, its prose
    out: list[_List] = []
    current: _List | None = None
    base_indent = 0
    last_line = ""
    blank_run = 0
    for raw in text.splitlines():
        line = raw.rstrip()
        heading = _HEADING.match(line)
        if heading:
            level = len(line.lstrip()) - len(line.lstrip().lstrip("#"))
            headings = [h for h in headings if h[0] < level] + [(level, heading["text"], [])]
            current, last_line, blank_run = None, "", 0
            continue
        if not line.strip():
            blank_run += 1
            continue
        item = _NUMBERED.match(line) or _BULLET.match(line)
        if item:
            indent = len(item["indent"])
            if current is not None and indent > base_indent + 1 and current.items:
                current.items[-1].text += " " + item["text"].strip()  # a sub-item: detail
            else:
                if current is None or blank_run > 1:
                    lead = _LEAD_IN.match(last_line)
                    current = _List(
                        [h for _, h, _ in headings if h],
                        lead["text"] if lead else None,
                        prose=[p for _, _, ps in headings for p in ps],
                    )
                    out.append(current)
                    base_indent = indent
                current.items.append(_Item(item["text"].strip(), item.re is _NUMBERED))
        elif current is not None and blank_run == 0 and current.items:
            current.items[-1].text += " " + line.strip()  # the item goes on
        else:
            current = None
            if not _LEAD_IN.match(line):
                headings[-1][2].append(line.strip())
        last_line = line
        blank_run = 0
    return out


def _name(lst: _List, title: str) -> str:
    """The procedure's name: its heading, or the parent heading when that only says "Steps"."""
    for heading in reversed(lst.headings):
        if not _GENERIC.match(heading.strip()):
            return heading
    if lst.lead_in and not _GENERIC.match(lst.lead_in.strip()):
        return lst.lead_in
    return title


def _context(prose: Sequence[str]) -> tuple[list[ContextPointDraft], str]:
    """Context points (when / why / precondition) from the prose above the steps, and the first
    other sentence (a description)."""
    points: list[ContextPointDraft] = []
    description = ""
    for para in prose:
        for sentence in re.split(r"(?<=[.!?。！？])\s*", para):
            sentence = sentence.strip()
            if len(sentence) < 4:
                continue
            for aspect, pattern in (("precondition", _PRE), ("why", _WHY), ("when", _WHEN)):
                if pattern.search(sentence):
                    points.append(ContextPointDraft(aspect=aspect, text=shorten(sentence, 300)))  # type: ignore[arg-type]
                    break
            else:
                description = description or sentence
    return points[:6], description


class _Locator:
    """Maps step texts back to the chunks (sentences) they were split into, in order."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = list(chunks)
        self.norm = [normalise_text(c.text) for c in self.chunks]

    def keys(self, text: str, start: int = 0) -> tuple[list[str], int]:
        target = normalise_text(text)
        keys: list[str] = []
        at = start
        for i in range(start, len(self.chunks)):
            if self.norm[i] and self.norm[i] in target:
                keys.append(self.chunks[i].key)
                at = i + 1
            elif keys:
                break
        return keys, at


def text_procedures(doc: ParsedDocument) -> list[ProcedureDraft]:
    """The procedures of a text or Markdown document."""
    found: list[ProcedureDraft] = []
    locate = _Locator(doc.chunks)
    at = 0
    for lst in _lists(doc.text):
        cue_text = " ".join([*lst.headings[-2:], lst.lead_in or ""])
        if not _qualifies(bool(_CUE.search(cue_text)), lst.items):
            continue
        name = shorten(_name(lst, doc.title), 200)
        context, description = _context(lst.prose)
        steps = []
        for item in lst.items:
            keys, at = locate.keys(item.text, at)
            steps.append(StepDraft(text=shorten(item.text, 600), sources=keys))
        summary = f"{name}: {description}" if description else ""
        found.append(ProcedureDraft(name=name, summary=summary, steps=steps, context=context))
    return found


def _inline_steps(text: str) -> list[str]:
    """Steps numbered 1, 2, 3, ... inside one text ("1. stop the queue 2. restart it ...")."""
    marks = list(_INLINE_STEP.finditer(text))
    wanted, kept = 1, []
    for m in marks:
        if int(m.group(1)) == wanted:
            kept.append(m)
            wanted += 1
    if len(kept) < 3:
        return []
    ends = [m.start() for m in kept[1:]] + [len(text)]
    return [text[m.end() : end].strip(" ;；,，") for m, end in zip(kept, ends, strict=True)]


def dialog_procedures(chunks: Sequence[Chunk]) -> list[tuple[ProcedureDraft, int]]:
    """Procedures one speaker lays out in a dialog, with the index (in ``chunks``) of their first
    turn. Turns of one speaker in a row are read together."""
    found: list[tuple[ProcedureDraft, int]] = []
    i = 0
    while i < len(chunks):
        j = i
        while j + 1 < len(chunks) and chunks[j + 1].speaker == chunks[i].speaker:
            j += 1
        run = chunks[i : j + 1]
        text = "\n".join(c.text for c in run)
        steps = _inline_steps(text) or _line_steps(text)
        before = chunks[i - 1].text if i > 0 else ""
        asked = bool(_HOW_QUESTION.search(before))
        cued = asked or bool(_CUE.search(text.split("\n")[0][:200]))
        if steps and cued and _share_imperative(steps) >= 0.5:
            lead = _INLINE_STEP.split(text, maxsplit=1)[0].strip(" :：")
            name = _dialog_name(before if asked else "", lead, steps[0])
            drafts = [StepDraft(text=shorten(s, 600), sources=_turns_with(run, s)) for s in steps]
            found.append((ProcedureDraft(name=name, steps=drafts), i))
        i = j + 1
    return found


def _line_steps(text: str) -> list[str]:
    items = [m["text"] for line in text.splitlines() if (m := _NUMBERED.match(line))]
    return items if len(items) >= 3 else []


def _turns_with(run: Sequence[Chunk], step: str) -> list[str]:
    target = normalise_text(step)[:40]
    return [c.key for c in run if target and target in normalise_text(c.text)][:1] or [run[0].key]


def _dialog_name(question: str, lead: str, first_step: str) -> str:
    if question:
        q = re.sub(
            r"^.*?\bhow\s+(?:do|does|did|should|can|could|would)\s+(?:we|i|you|they|one)\s+|"
            r"^.*?\bhow\s+to\s+",
            "",
            question.strip(),
            flags=re.IGNORECASE,
        )
        return shorten(q.strip(" ?？。."), 160) or shorten(question, 160)
    if lead and len(lead) > 3:
        return shorten(lead, 160)
    return shorten(first_step, 160)


def attach_procedures(
    episodes: list[EpisodeDraft],
    parts: list[tuple[str | None, list[Chunk]]],
    procedures: list[ProcedureDraft],
) -> list[EpisodeDraft]:
    """Each procedure joins the episode of the part its first step came from (else the first)."""
    if not procedures or not episodes:
        return episodes
    owner = {c.key: i for i, (_, part) in enumerate(parts) for c in part}
    extra: list[list[ProcedureDraft]] = [[] for _ in episodes]
    for proc in procedures:
        keys = [k for st in proc.steps for k in st.sources]
        extra[owner.get(keys[0], 0) if keys else 0].append(proc)
    return [
        ep.model_copy(update={"procedures": found}) if found else ep
        for ep, found in zip(episodes, extra, strict=True)
    ]


__all__ = ["attach_procedures", "dialog_procedures", "is_imperative", "text_procedures"]
