"""Rule-based entity types: only stated business roles, only for names already found."""

from __future__ import annotations

import uuid

from memflow.drafts import EntityDraft
from memflow.ids import make_id
from memflow.ingest.entity_types import entity_labels, type_name
from memflow.store.plan import Planner


def test_stated_roles_only() -> None:
    text = (
        "Acme is our customer. We pay the supplier Norbright monthly. 供应商恒远已发货。"
        "蓝鲸科技是我们的客户。Bob went home with a customer."
    )
    names = ["Acme", "Norbright", "恒远", "蓝鲸科技", "Bob"]
    assert entity_labels(text, names) == {
        "Acme": ["customer"],
        "Norbright": ["supplier"],
        "恒远": ["supplier"],
        "蓝鲸科技": ["customer"],
    }
    assert entity_labels("Mia is my friend and a runner.", ["Mia"]) == {}


def test_type_names() -> None:
    assert type_name("customers") == "customer" and type_name("供应商") == "supplier"
    assert type_name("weather") == "weather"


def test_planner_links_an_entity_to_its_type_once() -> None:
    ds = uuid.UUID(int=7)
    planner = Planner(ds)
    planner._entity(EntityDraft(name="Acme", types=["customer"]), ["s1"])
    planner._entity(EntityDraft(name="Lakeview", types=["customer"]), ["s2"])
    plan = planner.finish()
    tid = make_id(ds, "EntityType", "customer")
    assert plan.nodes[tid].kind == "EntityType" and sorted(plan.nodes[tid].sources) == ["s1", "s2"]
    links = [e for e in plan.edges.values() if e.relationship == "is_a"]
    assert sorted(e.edge_text for e in links) == ["Acme is a customer", "Lakeview is a customer"]
    assert [e.collection for e in plan.embeds].count("EntityType_name") == 1
