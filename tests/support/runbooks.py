"""Invented runbooks (English and Chinese) shared by the procedure tests."""

from __future__ import annotations

RUNBOOK_EN = """# Rolling back a release

Use this when a deploy breaks production. Make sure you can open the release dashboard.

## Steps
1. Freeze the deploy pipeline in the release channel.
2. Find the last good build tag in the release dashboard.
3. Run the rollback job with that tag.
4. Watch the error rate for 15 minutes.
5. Write a short incident note for the team.
"""
STEPS_EN = [
    "Freeze the deploy pipeline in the release channel.",
    "Find the last good build tag in the release dashboard.",
    "Run the rollback job with that tag.",
    "Watch the error rate for 15 minutes.",
    "Write a short incident note for the team.",
]
RUNBOOK_ZH = """# 发布回滚流程

线上发布出现严重故障时使用。为了减少影响，先回滚再排查。

1. 在发布群里冻结发布流水线。
2. 找到上一个正常的构建标签。
3. 用该标签运行回滚任务。
4. 观察错误率十五分钟。
5. 写一份简短的事故说明。
"""
STEPS_ZH = [
    "在发布群里冻结发布流水线。",
    "找到上一个正常的构建标签。",
    "用该标签运行回滚任务。",
    "观察错误率十五分钟。",
    "写一份简短的事故说明。",
]
