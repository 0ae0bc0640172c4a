"""`memflow demo` end to end with the real default embedder: the answers a person would call right."""

from __future__ import annotations

import json
import subprocess
import sys


def test_demo_answers_each_question_with_the_right_episode(db_url: str) -> None:
    cmd = [sys.executable, "-m", "memflow.cli", "demo", "--database-url", db_url, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert [d["status"] for d in payload["documents"]] == ["written"] * 4
    assert [d["procedures"] for d in payload["documents"]] == [0, 0, 1, 0]  # the runbook
    tops = {s["question"]: s["response"]["results"][0]["name"] for s in payload["searches"]}
    assert tops["API 流式返回改造有哪些约束？"] == "API 流式返回改造"
    assert tops["When is the read cut-over to PostgreSQL planned?"].startswith(
        "Decision: moving the orders database"
    )
    assert (
        "Lisbon" in tops["What is the confirmation code of the Lisbon flights?"]
        or "20 May 2024" in tops["What is the confirmation code of the Lisbon flights?"]
    )
    evidence = {s["question"]: s["evidence"] for s in payload["searches"]}
    # The headline question is answered from the section it names: all three constraints.
    for constraint in ("鉴权中间件不能改", "旧客户端不支持 SSE", "网关的单连接超时是 60 秒"):
        assert constraint in evidence["API 流式返回改造有哪些约束？"]
    assert "QX7L2M" in evidence["What is the confirmation code of the Lisbon flights?"]
    assert (
        "Tom Becker reviews every schema change"
        in evidence["Who reviews schema changes in the orders migration?"]
    )
    [how] = payload["procedure"]["results"]
    assert how["kind"] == "procedure" and how["name"] == "Runbook: rolling back a release"
    assert len(how["steps"]) == 5 and how["steps"][1].startswith("Find the last green build")
    # A second run memorises nothing new.
    again = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout)
    assert [d["status"] for d in again["documents"]] == ["skipped"] * 4
