"""Conversations in which a fact changes (issue 12, item 7): the generator of benchmarks/updates.

Every conversation is invented here by templates (English and Chinese, several wordings per
move), never copied from a dataset. One person tells a friend about one fact over 4-6 sessions
some weeks apart; the fact changes 0-3 times (0: a control). Between the changes come
"additive" restatements, which mention the current value again without changing it and must not
supersede anything, and small talk. Kinds of fact: home city, employer, a deadline, a tool, a
number (team size, a monthly price) and a negation (vegetarian / no longer vegetarian).

Each conversation carries its questions: the current value (``as_of`` None), each past value
(``as_of`` inside that value's validity, after it was said and before it changed), and for the
controls the one value. A question's ``expected`` turns state the value that answers it;
``value_keys`` are all the turns that state any value of the fact, so "ranked first" means: of the
turns about this fact, the first one the search ranks states the right value.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

# ---------------------------------------------------------------- templates per kind of fact
# state: the first statement; change: a new value; restate: the same value again (additive);
# ask: the question. "{v}" is the value, "{n}" the person's name.

SLOTS: dict[str, dict[str, Any]] = {
    "city": {
        "en": {
            "values": ["Boston", "Seattle", "Denver", "Lisbon", "Toronto", "Dublin", "Austin",
                       "Melbourne", "Osaka", "Edinburgh"],
            "state": ["I live in {v}.", "Home for me is {v} these days.",
                      "My apartment is in {v}.", "I've been living in {v} for a few years."],
            "change": ["We moved to {v} last week.", "Big news: I relocated to {v}.",
                       "I just finished moving to {v}, new flat and all.",
                       "I packed everything up and now I live in {v}."],
            "restate": ["{v} is lovely when the weather is good.",
                        "I found a great bakery near my place in {v}.",
                        "Still enjoying life in {v}, the commute is easy."],
            "ask": ["Where does {n} live now?", "Which city is {n} based in?"],
        },
        "zh": {
            "values": ["北京", "上海", "杭州", "成都", "深圳", "南京", "西安", "武汉", "厦门", "青岛"],
            "state": ["我住在{v}。", "我现在的家在{v}。", "我在{v}租了一套房子，住了好几年了。"],
            "change": ["我们上周搬到{v}了。", "告诉你个消息：我已经搬去{v}了。",
                       "我刚搬完家，现在住在{v}。"],
            "restate": ["{v}这几天天气特别好。", "我在{v}家附近发现了一家很好吃的面馆。",
                        "在{v}生活挺舒服的，通勤也方便。"],
            "ask": ["{n}现在住在哪里？", "{n}住在哪个城市？"],
        },
    },
    "employer": {
        "en": {
            "values": ["Northwind Labs", "Bluepeak Analytics", "Orchard Systems",
                       "Tidewater Health", "Quillstone", "Redfern Robotics", "Lumen Freight"],
            "state": ["I work at {v}.", "I'm an engineer at {v}.", "My job is at {v}."],
            "change": ["I started a new job at {v}.", "I left my old job and joined {v}.",
                       "As of this month I work for {v}."],
            "restate": ["The people at {v} are really friendly.",
                        "{v} gives us Friday afternoons off in summer."],
            "ask": ["Where does {n} work now?", "Who is {n}'s employer?"],
        },
        "zh": {
            "values": ["星河科技", "蓝峰数据", "青禾软件", "远航物流", "明德医疗", "云杉机器人"],
            "state": ["我在{v}上班。", "我是{v}的工程师。", "我的工作单位是{v}。"],
            "change": ["我跳槽去{v}了。", "我辞职了，现在在{v}工作。", "从这个月起我在{v}上班。"],
            "restate": ["{v}的同事都很好相处。", "{v}夏天周五下午放假。"],
            "ask": ["{n}现在在哪里工作？", "{n}在哪家公司上班？"],
        },
    },
    "deadline": {
        "en": {
            "values": ["3 March", "18 April", "9 May", "27 June", "14 July", "2 September",
                       "21 October"],
            "state": ["The launch deadline is {v}.", "We have to ship the launch by {v}."],
            "change": ["The launch deadline moved to {v}.", "They pushed the launch to {v}.",
                       "New plan: the launch is now due on {v}."],
            "restate": ["I put {v} in the team calendar for the launch.",
                        "Everyone is working towards the launch on {v}."],
            "ask": ["When is the launch deadline?", "By when does {n}'s team have to launch?"],
        },
        "zh": {
            "values": ["3月3日", "4月18日", "5月9日", "6月27日", "7月14日", "9月2日"],
            "state": ["上线的截止日期是{v}。", "我们必须在{v}之前上线。"],
            "change": ["上线日期改到{v}了。", "上线被推迟到{v}。", "新计划：{v}上线。"],
            "restate": ["我已经把{v}上线写进了团队日历。", "大家都在为{v}上线做准备。"],
            "ask": ["上线截止日期是哪天？", "{n}的团队什么时候必须上线？"],
        },
    },
    "tool": {
        "en": {
            "values": ["Trello", "Jira", "Linear", "Asana", "Notion", "Basecamp"],
            "state": ["We track our tasks in {v}.", "Our team plans its work in {v}."],
            "change": ["We switched our planning to {v}.",
                       "We dropped the old tool and now plan everything in {v}."],
            "restate": ["{v} has a neat board view for our tasks.",
                        "I like the keyboard shortcuts in {v}."],
            "ask": ["Which tool does {n}'s team use to plan its work?",
                    "What do {n} and the team track tasks in now?"],
        },
        "zh": {
            "values": ["飞书", "钉钉", "Jira", "Trello", "Notion", "禅道"],
            "state": ["我们用{v}管理任务。", "我们团队在{v}上排计划。"],
            "change": ["我们把任务管理换成{v}了。", "旧工具不用了，现在全在{v}上排计划。"],
            "restate": ["{v}的看板视图挺好用的。", "我挺喜欢{v}的快捷键。"],
            "ask": ["{n}的团队用什么工具管理任务？", "{n}他们现在在哪个工具上排计划？"],
        },
    },
    "team_size": {
        "en": {
            "values": ["four", "six", "seven", "nine", "eleven", "twelve", "fifteen"],
            "state": ["My team has {v} people.", "There are {v} of us on the team."],
            "change": ["We hired more, so my team is {v} people now.",
                       "After the reorg my team has {v} people."],
            "restate": ["All {v} of us on the team had lunch together.",
                        "With {v} people on the team, stand-ups stay short."],
            "ask": ["How many people are on {n}'s team?", "How big is {n}'s team now?"],
        },
        "zh": {
            "values": ["四", "六", "七", "九", "十一", "十二", "十五"],
            "state": ["我们组有{v}个人。", "我们团队一共{v}个人。"],
            "change": ["招了新人，现在我们组有{v}个人了。", "重组之后我们团队变成{v}个人。"],
            "restate": ["我们组{v}个人一起吃了午饭。", "团队{v}个人，站会开得很快。"],
            "ask": ["{n}的团队有多少人？", "{n}他们组现在几个人？"],
        },
    },
    "price": {
        "en": {
            "values": ["35", "40", "45", "52", "60", "28"],
            "state": ["My gym membership costs {v} dollars a month.",
                      "I pay {v} dollars a month for the gym."],
            "change": ["The gym raised the membership to {v} dollars a month.",
                       "My gym now charges {v} dollars a month."],
            "restate": ["For {v} dollars a month the gym is still worth it.",
                        "I paid the {v} dollars for this month's gym membership."],
            "ask": ["How much does {n}'s gym membership cost?",
                    "What does {n} pay for the gym each month?"],
        },
        "zh": {
            "values": ["199", "229", "259", "299", "159", "349"],
            "state": ["我的健身房月卡是{v}元。", "我每个月交{v}元健身费。"],
            "change": ["健身房涨价了，月卡现在{v}元。", "健身房月卡改成{v}元一个月了。"],
            "restate": ["一个月{v}元，健身房还是挺值的。", "这个月的{v}元健身费我已经交了。"],
            "ask": ["{n}的健身房月卡多少钱？", "{n}每个月健身花多少钱？"],
        },
    },
    "diet": {
        "en": {
            "values": ["vegetarian", "not vegetarian"],
            "state": {"vegetarian": ["I'm vegetarian.", "I don't eat meat, I'm vegetarian."],
                      "not vegetarian": ["I eat meat, I'm not vegetarian.",
                                         "I'm not vegetarian, I love a good steak."]},
            "change": {"vegetarian": ["I went vegetarian this month, no more meat.",
                                      "I'm vegetarian again since last week."],
                       "not vegetarian": ["I'm no longer vegetarian; I eat fish and chicken again.",
                                          "I stopped being vegetarian, meat is back on my plate."]},
            "restate": {"vegetarian": ["I tried a new lentil recipe, still no meat for me.",
                                       "Being vegetarian makes me cook more vegetables.",
                                       "I ordered the mushroom risotto, no meat for me."],
                        "not vegetarian": ["I grilled chicken for dinner yesterday.",
                                           "We had beef noodles for lunch, so good.",
                                           "I bought salmon at the market for the weekend."]},
            "ask": ["Is {n} vegetarian?", "Does {n} eat meat?"],
        },
        "zh": {
            "values": ["吃素", "不吃素"],
            "state": {"吃素": ["我吃素。", "我不吃肉，是素食者。"],
                      "不吃素": ["我吃肉，不是素食者。", "我不吃素，很爱吃红烧肉。"]},
            "change": {"吃素": ["这个月开始我吃素了，不再吃肉。", "上周起我又开始吃素了。"],
                       "不吃素": ["我已经不吃素了，又开始吃鱼和鸡肉。", "我不再吃素了，现在也吃肉。"]},
            "restate": {"吃素": ["我试了一个新的豆腐菜谱，还是不吃肉。", "吃素以后我做饭多放蔬菜。",
                                 "我点了蘑菇烩饭，不吃肉。"],
                        "不吃素": ["昨天晚饭我做了红烧鸡。", "中午吃了牛肉面，特别香。",
                                  "我在市场买了三文鱼周末吃。"]},
            "ask": ["{n}吃素吗？", "{n}现在吃肉吗？"],
        },
    },
}  # fmt: skip

NAMES = {
    "en": [("Maya", "Rafe"), ("Priya", "Tom"), ("Leo", "Ana"), ("Nora", "Otto"), ("Ivan", "Beth")],
    "zh": [
        ("李娜", "王强"),
        ("陈静", "刘洋"),
        ("张伟", "赵敏"),
        ("周琳", "孙浩"),
        ("吴迪", "郑爽"),
    ],
}
SMALL_TALK = {
    "en": [
        "How was your weekend?",
        "I watched a documentary about whales.",
        "My sister is visiting next month.",
        "I finally fixed my bike's brakes.",
        "Have you read anything good lately?",
        "The coffee machine at work broke again.",
        "I'm learning to bake sourdough.",
        "We played board games until midnight.",
    ],
    "zh": [
        "你周末过得怎么样？",
        "我看了一部关于鲸鱼的纪录片。",
        "我妹妹下个月来看我。",
        "我终于把自行车的刹车修好了。",
        "最近有读到什么好书吗？",
        "公司的咖啡机又坏了。",
        "我在学做酸面包。",
        "我们玩桌游玩到半夜。",
    ],
}
REPLIES = {
    "en": ["That's great to hear!", "Oh, interesting.", "Sounds good.", "Nice, tell me more.",
           "Ha, I know the feeling."],
    "zh": ["真不错！", "哦，挺有意思的。", "听起来不错。", "好呀，多说说。", "哈哈，我懂。"],
}  # fmt: skip


@dataclass
class Question:
    kind: str  # current | past | control
    text: str
    as_of: datetime | None
    expected: set[str]  # turn keys that state the answering value
    value_keys: set[str]  # every turn that states a value of the fact


@dataclass
class Conversation:
    cid: str
    lang: str
    slot: str
    person: str
    values: list[str]  # in the order they held
    sessions: list[dict[str, Any]]  # {"started_at": ISO, "messages": [{"id", "speaker", "text"}]}
    value_of: dict[str, int] = field(default_factory=dict)  # turn key -> index into values
    texts: dict[str, str] = field(default_factory=dict)  # turn key -> "Speaker: text"
    questions: list[Question] = field(default_factory=list)
    split: str = "tune"  # "tune" (rules and constants are chosen on it) or "test"

    @property
    def changes(self) -> int:
        return len(self.values) - 1

    def document(self) -> str:
        return json.dumps({"title": self.cid, "sessions": self.sessions}, ensure_ascii=False)

    def superseded_keys(self) -> set[str]:
        """Turns that state a value that later changed: these, and only these, may be
        superseded."""
        return {k for k, i in self.value_of.items() if i < len(self.values) - 1}


def _pick(rng: random.Random, options: Any, value: str, person: str, used: set[str]) -> str:
    """A wording for ``value`` that ``person`` has not said yet (when one is left)."""
    pool = [
        str(o).format(v=value) for o in (options[value] if isinstance(options, dict) else options)
    ]
    fresh = [o for o in pool if f"{person}: {o}" not in used]
    return rng.choice(fresh or pool)


def _values(rng: random.Random, slot: str, lang: str, changes: int) -> list[str]:
    pool = list(SLOTS[slot][lang]["values"])
    if slot == "diet":
        first = rng.randrange(2)
        return [pool[(first + i) % 2] for i in range(changes + 1)]
    return rng.sample(pool, changes + 1)


def conversation(index: int, lang: str, slot: str, changes: int, seed: int) -> Conversation:
    """One conversation: the fact's value changes ``changes`` times (0: a control)."""
    rng = random.Random(f"{seed}:{index}")
    t = SLOTS[slot][lang]
    person, friend = NAMES[lang][index % len(NAMES[lang])]
    values = _values(rng, slot, lang, changes)
    conv = Conversation(f"upd-{lang}-{index:03d}", lang, slot, person, values, [])
    # Sessions: the first states the value, each change gets its own later session, and every
    # value is restated (additively) once in a session of its own or after the change.
    moves: list[tuple[str, int]] = [("state", 0)]
    for i in range(1, changes + 1):
        moves.append(("restate", i - 1))
        moves.append(("change", i))
    moves.append(("restate", changes))
    if changes == 0:
        moves.append(("restate", 0))
    day = datetime(2023, 1, 9, 19, 0, tzinfo=UTC) + timedelta(days=rng.randrange(0, 200))
    for s, (move, vi) in enumerate(moves):
        sid = f"S{s + 1}"
        lines: list[tuple[str, str, int | None]] = []
        talk = rng.sample(SMALL_TALK[lang], 2)
        lines.append((person, talk[0], None))
        lines.append((friend, rng.choice(REPLIES[lang]), None))
        said = _pick(rng, t[move], values[vi], person, set(conv.texts.values()))
        lines.append((person, said, vi))
        lines.append((friend, rng.choice(REPLIES[lang]), None))
        lines.append((friend, talk[1], None))
        lines.append((person, rng.choice(REPLIES[lang]), None))
        messages = []
        for m, (speaker, text, value) in enumerate(lines):
            key = f"{sid}:{m + 1}"
            messages.append({"id": key, "speaker": speaker, "text": text})
            conv.texts[key] = f"{speaker}: {text}"
            if value is not None:
                conv.value_of[key] = value
        conv.sessions.append({"started_at": day.isoformat(), "messages": messages})
        day += timedelta(days=rng.randrange(18, 45))
    _questions(conv, rng)
    return conv


def _session_time(conv: Conversation, key: str) -> datetime:
    return datetime.fromisoformat(conv.sessions[int(key.split(":")[0][1:]) - 1]["started_at"])


def _questions(conv: Conversation, rng: random.Random) -> None:
    ask = SLOTS[conv.slot][conv.lang]["ask"]
    value_keys = set(conv.value_of)
    last = len(conv.values) - 1
    current = {k for k, i in conv.value_of.items() if i == last}
    kind = "current" if conv.changes else "control"
    text = rng.choice(ask).format(n=conv.person)
    conv.questions.append(Question(kind, text, None, current, value_keys))
    for i in range(last):
        said = {k for k, v in conv.value_of.items() if v == i}
        start = min(_session_time(conv, k) for k in said)
        changed = min(_session_time(conv, k) for k, v in conv.value_of.items() if v == i + 1)
        as_of = start + (changed - start) / 2  # inside the old value's validity
        known = {k for k in said if _session_time(conv, k) <= as_of}
        conv.questions.append(
            Question("past", rng.choice(ask).format(n=conv.person), as_of, known, value_keys)
        )


def split_of(index: int) -> str:
    """The half conversation ``index`` belongs to. English/Chinese pairs (one kind of fact and
    change count per pair) go by the parity of change count + kind, so both halves hold every
    kind of fact and every change count (16 and 14 pairs of the default 30)."""
    pair = index // 2
    return "tune" if (pair % 4 + pair % len(SLOTS)) % 2 == 0 else "test"


def conversations(n: int = 60, seed: int = 12) -> list[Conversation]:
    """``n`` conversations, half English and half Chinese, cycling through the kinds of fact and
    0-3 changes (every fourth one a control with no change), each in its half (:func:`split_of`)."""
    slots = list(SLOTS)
    out = []
    for i in range(n):
        lang = "en" if i % 2 == 0 else "zh"
        slot = slots[(i // 2) % len(slots)]
        changes = (0, 1, 2, 3)[(i // 2) % 4]
        conv = conversation(i, lang, slot, changes, seed)
        conv.split = split_of(i)
        out.append(conv)
    return out


__all__ = ["SLOTS", "Conversation", "Question", "conversation", "conversations", "split_of"]
