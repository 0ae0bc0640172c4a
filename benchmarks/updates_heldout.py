"""A hand-written held-out check of the supersession rules (issue 12): pairs worded unlike the
generator of :mod:`benchmarks.updates_data`, never used to choose a rule.

``UPDATES``: an earlier statement and a later one by the same speaker that replaces it (the rules
should close the earlier one). ``CONTROLS``: an earlier statement and a later one that must not
close it (additions, other people, plans, questions, events, other things). Each pair is read by
:func:`memflow.text.supersede.superseded_by_rules` as two points of one speaker said weeks
apart; coverage is the share of updates closed, false supersessions the controls closed.

    python -m benchmarks.updates_heldout            # figures and every miss
"""

from __future__ import annotations

import sys
import uuid
from datetime import UTC, datetime
from typing import Any

from memflow.text.supersede import PointFact, superseded_by_rules

BEFORE = datetime(2024, 2, 6, 18, 0, tzinfo=UTC)
AFTER = datetime(2024, 3, 21, 18, 0, tzinfo=UTC)

UPDATES: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("I rent a small place in Glasgow.", "I've relocated to Cardiff for good."),
        ("We're living in Utrecht at the moment.", "We moved out to Ghent in the spring."),
        ("I'm based in Porto.", "These days I live in Valencia."),
        ("I work for Kestrel Bank.", "I quit Kestrel Bank and now work at Harbor Mutual."),
        ("I'm a data analyst at Finch Retail.", "I accepted a position with Corvid Games."),
        ("My employer is Sandline Energy.", "I joined Marlow Studio after leaving Sandline."),
        ("Our standup is at 9:30.", "We moved the standup to 10:15."),
        ("The board meeting is on 12 May.", "The board meeting was postponed to 26 May."),
        ("The thesis is due on March 30.", "My thesis deadline was pushed back to April 20."),
        ("My rent is 1200 euros a month.", "The landlord raised my rent to 1350 euros."),
        ("The team budget is 40000 dollars.", "The team budget was cut to 32000 dollars."),
        ("My commute takes 50 minutes.", "Since the new bus line my commute takes 25 minutes."),
        ("I smoke about ten cigarettes a day.", "I no longer smoke at all."),
        ("I drink coffee every morning.", "I stopped drinking coffee, only tea now."),
        ("I don't drive, I cycle everywhere.", "I finally started driving to work."),
        (
            "We store the invoices in Dropbox.",
            "We replaced Dropbox with Nextcloud for the invoices.",
        ),
        ("The project uses MySQL.", "The project switched from MySQL to PostgreSQL."),
        ("My phone is an iPhone.", "I changed my phone to a Pixel."),
        ("Our office is in the Harbour Building.", "Our office moved to Quay Tower."),
        ("The gym opens at 6 am.", "The gym now opens at 7 am."),
        ("I own two cats.", "I have three cats now that we adopted a kitten."),
        ("My manager is Hilde.", "My manager changed, it's Tobias now."),
    ],
    "zh": [
        ("我在广州租房住。", "我已经搬回长沙了。"),
        ("我们家住在苏州。", "年初我们搬家到了合肥。"),
        ("我在一家叫青松会计的事务所上班。", "我跳槽到了海鸥保险。"),
        ("我是白鹭银行的会计。", "我离开白鹭银行，加入了金桥证券。"),
        ("周会定在周二上午。", "周会改到周四下午了。"),
        ("答辩时间是6月12日。", "答辩推迟到6月26日了。"),
        ("合同截止日期是3月31日。", "合同截止日期延期到4月15日。"),
        ("我的房租是每月3500元。", "房东把房租涨到3800元了。"),
        ("项目预算是20万元。", "项目预算被砍到15万元了。"),
        ("我每天通勤要一个半小时。", "换了新工作以后，我现在通勤只要20分钟。"),
        ("我每天喝两杯咖啡。", "我现在不再喝咖啡了。"),
        ("我抽烟。", "我戒烟了，已经不抽烟了。"),
        ("我不会开车。", "我最近开始开车上班了。"),
        ("我们用微信群沟通工作。", "我们现在改用企业微信沟通工作了。"),
        ("我们的代码放在GitLab上。", "我们把代码仓库换成GitHub了。"),
        ("我的手机是华为的。", "我把手机换成小米了。"),
        ("公司在望京办公。", "公司搬到了亦庄办公。"),
        ("健身房早上六点开门。", "健身房现在改为七点开门。"),
        ("我们部门有八个人。", "我们部门现在变成十个人了。"),
        ("我的导师是王老师。", "我的导师换成了李老师。"),
        ("我平时骑车上班。", "我不再骑车上班了，改坐地铁。"),
    ],
}

CONTROLS: list[tuple[str, str]] = [
    ("I live in Leeds.", "My brother lives in York."),
    ("I live in Leeds.", "We might move to Bristol next year."),
    ("I work at Pellam Foods.", "My wife works at Orbis Labs."),
    ("I work at Pellam Foods.", "Should I apply to Orbis Labs?"),
    ("I drink coffee every morning.", "I also drink green tea in the afternoon."),
    ("I ran 10 km on Sunday.", "I ran 12 km this morning."),
    ("We visited Rome in June.", "We visited Vienna in August."),
    ("The sprint review is on 3 April.", "The next sprint review is on 17 April."),
    ("My rent is 1200 euros a month.", "Parking costs 80 euros a month."),
    ("I have two cats.", "My neighbour has three dogs."),
    ("Our office is in the Harbour Building.", "The client's office is in Quay Tower."),
    ("I read a novel by Ishiguro.", "I read a novel by Murakami."),
    ("We store the invoices in Dropbox.", "We keep the photos in Google Photos."),
    ("I don't eat pork.", "I had chicken for dinner."),
    ("The bakery opens at 7 am.", "The pharmacy opens at 9 am."),
    ("我住在广州。", "我姐姐住在深圳。"),
    ("我住在广州。", "我们打算明年搬到杭州。"),
    ("我在青松会计上班。", "我老公在海鸥保险上班。"),
    ("我每天喝两杯咖啡。", "我下午也喝绿茶。"),
    ("周会定在周二上午。", "下次读书会在周六下午。"),
    ("我们用微信群沟通工作。", "我们用钉钉打卡。"),
    ("我的房租是每月3500元。", "停车费每月300元。"),
    ("我今天跑了5公里。", "我昨天跑了8公里。"),
    ("我不吃辣。", "我今天吃了一碗面。"),
    ("项目预算是20万元。", "市场活动的预算是5万元。"),
]


def _pair(old: str, new: str, speaker: str) -> bool:
    o = PointFact(uuid.uuid4(), f"{speaker}: {old}", speaker, BEFORE)
    n = PointFact(uuid.uuid4(), f"{speaker}: {new}", speaker, AFTER)
    return any(s.old == o.id for s in superseded_by_rules(n, [o]))


def evaluate() -> dict[str, Any]:
    """Coverage of the updates per language and false supersessions on the controls."""
    out: dict[str, Any] = {"updates": {}, "misses": [], "false": []}
    for lang, pairs in UPDATES.items():
        closed = 0
        for old, new in pairs:
            if _pair(old, new, "Ravi" if lang == "en" else "小周"):
                closed += 1
            else:
                out["misses"].append([old, new])
        out["updates"][lang] = {"pairs": len(pairs), "superseded": closed,
                                "share": round(closed / len(pairs), 3)}  # fmt: skip
    for old, new in CONTROLS:
        if _pair(old, new, "Ravi"):
            out["false"].append([old, new])
    out["controls"] = {"pairs": len(CONTROLS), "superseded": len(out["false"])}
    return out


def main() -> int:
    res = evaluate()
    for lang, c in res["updates"].items():
        print(f"{lang}: {c['superseded']}/{c['pairs']} updates superseded ({c['share']:.0%})")
    print(f"controls: {res['controls']['superseded']}/{res['controls']['pairs']} superseded")
    for old, new in res["misses"]:
        print(f"  miss: {old} -> {new}")
    for old, new in res["false"]:
        print(f"  FALSE: {old} -> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
