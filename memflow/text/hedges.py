"""Words that hold a statement back: a question, a hedge, a proposal, a change turned down.
One vocabulary for the write path (:mod:`memflow.text.supersede`: such a statement closes
nothing) and the read path (:mod:`memflow.text.conflict`: it states no value)."""

from __future__ import annotations

import re

_EN = (
    # a hedge or a wish
    r"if|unless|maybe|perhaps|might|could|would|should|whether|wish|hope|not sure|wonder|"
    r"thinking about|considering|"
    # a proposal, and one turned down
    r"propos(?:al|als|e|ed|es|ing)|suggest(?:s|ed|ion)?|"
    r"rejected|declined|turned down|voted down|vetoed|not approved|was not accepted"
)
_ZH = (
    r"如果|假如|可能|也许|是否|会不会|要不要|吗|呢|考虑|"
    r"提议|建议|提案|没通过|未通过|不通过|否决|驳回|被拒|维持原样"
)


def unsure_pattern(en: str = "", zh: str = "") -> re.Pattern[str]:
    """The shared vocabulary with a path's own words added (alternations: ``en`` matched as
    whole words)."""
    words = f"{_EN}|{en}" if en else _EN
    chinese = f"{_ZH}|{zh}" if zh else _ZH
    return re.compile(rf"\?|？|\b(?:{words})\b|{chinese}", re.IGNORECASE)


__all__ = ["unsure_pattern"]
