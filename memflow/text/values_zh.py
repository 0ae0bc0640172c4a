"""Pure: the names a Chinese statement gives (memflow.text.values): people by the words around
them ("由王芳负责", "向赵敏汇报", "负责人是…", "会计聂青禾"), places ("在上海机房"), products and tools
("改用企业微信", Latin words such as "Redis"), quoted names, and values named after what they are
the value of ("地点：安吉", "对接人为方婷")."""

from __future__ import annotations

import re

_LATIN_IN_ZH = re.compile(r"[A-Za-z][A-Za-z0-9.+#/_-]*(?:\s[A-Z][A-Za-z0-9.+#/_-]*)*")
_QUOTED_ZH = re.compile(r"[「“《『]([^」”》』]{1,20})[」”》』]")
# Words next to a name that say what it is (English, lower case; Chinese patterns below).
_ZH_PERSON = re.compile(
    r"(?:(?:负责|对接|联系|维护|接口)人(?:是|为|：|:|换成|改为|变成)?|(?:负责|维护|主导|跟进|牵头)\s*[：:]\s*|"
    r"由|交给|交由|转给|找|归)"
    r"(?![我你他她它咱])(?P<v>[\u4e00-\u9fff]{2,3}?)"
    r"(?=负责|来|接手|处理|跟进|对接|维护|担任|主持|带|，|。|,|\.|、|了|$)|"
    r"(?:(?<=[起由是为给把让请和跟与、，,：:\s])|^)(?P<w>[\u4e00-\u9fff]{2,3}?)"
    r"(?=(?:负责|接手|来负责|来维护|来管|来做|牵头|维护)(?!人))"
)
# A person named after their role ("交给会计聂青禾", "新来的助理程望", "同事柏舟坐在…"): the role word
# in front, two or three characters, then where a name ends.
_ZH_ROLE_PERSON = re.compile(
    r"(?:行政|同事|经理|主管|前台|助理|秘书|会计|出纳|律师|医生|护士|司机|管家|班主任|辅导员|店长|"
    r"老师|教练|主治医生|主诊医生|经办人)"
    # (as a form's field: "医生：林青禾")
    r"(?:\s*[：:]\s*)?"
    r"(?!部|人员|工作|事务|流程|手续|系统|审批|管理|楼|区|办|中心|群|同事|"
    # a verb or a word of the sentence, not a name ("经理是谁")
    r"[的和与跟也都会说们是为在有要就还已把被让给对从到去来])"
    r"(?![\u4e00-\u9fff]{0,2}(?:谁|什么|哪))(?P<v>[\u4e00-\u9fff]{2,3}?)"
    r"(?=[，,。.（(、；;：:\s！!？?]|$|负责|来|说|已|在|坐|会|也|今天|明天|接手|处理)"
)
# ... and a person named before their title, after a verb or a pause ("挂了林青禾医生的号")
_ZH_TITLED_PERSON = re.compile(
    r"(?:(?<=[了找问约请是给跟和与把让、，,：:\s])|^)(?!我|你|他|她)(?P<v>[\u4e00-\u9fff]{2,3}?)"
    r"(?:医生|大夫|老师|教练|律师|主任|师傅)(?=的|[，,。.（(、；;：:\s！!？?]|$)"
)
_ZH_PLACE = re.compile(
    r"(?:在|到|搬到|迁到|改到|改在|换到)\s?(?P<v>[\u4e00-\u9fff]{2,8}?)(?=办公|上班|工作|开会|召开|开|举行|举办|见面|"
    r"住|生活|集合|机房|运行|部署|，|。|,|\.|（|\(|$)"
)
# ... and a venue named by what it is, however long its name ("在湖滨的松涛酒店多功能厅": 松涛酒店)
_ZH_VENUE = re.compile(
    r"(?:在|到|于)\s?(?:[\u4e00-\u9fff]{1,4}的)?(?P<v>[\u4e00-\u9fff]{2,10}?"
    r"(?:酒店|宾馆|饭店|酒楼|餐厅|中心|大厦|广场|公园|体育馆|礼堂|会所|剧院|医院|门诊部|诊所))"
)
_ZH_PRODUCT = re.compile(
    r"(?:用|使用|采用|改用|换成|改成|改为|迁到|迁移到|切到|切换到|基于)(?!于)(?P<v>[\u4e00-\u9fffA-Za-z0-9.+#/_-]{2,12}?)"
    r"(?=来|做|作为|实现|存|部署|，|。|,|\.|了|$)"
)


# A Chinese value named after the thing it is the value of ("地点：安吉", "对接人为方婷") or after a
# verb that takes it ("改走钉钉", "定莫干山", "向赵敏汇报").
_ZH_RUN = r"(?P<v>[\u4e00-\u9fffA-Za-z0-9][\u4e00-\u9fffA-Za-z0-9._-]{1,9}?)"
_ZH_STOP = r"(?=[，,。；;：:（(）)\s、！!？?]|的|了|吧|呢|啊|$)"
_ZH_LABELLED = re.compile(
    r"(?:地点|地址|城市|机房|区域|位置|场地|负责人|对接人|联系人|维护人|owner|接口人|版本|渠道|工具|平台|方式|"
    r"供应商|厂商|服务商|目的地|酒店|会议室)\s*(?:是|为|在|定在|定为|定|：|:|改为|换成|变成|调整为|改成)\s*"
    + _ZH_RUN
    + _ZH_STOP
)
_ZH_OBJECTS = re.compile(
    r"(?:改走|走|通过|改用|换用|(?<![原确决一约规预稳固制设肯])定|去|改去|搬到|迁到|切到|升级到|换成|改成|改为)\s*"
    # "定了去婺源": the place, not "了去婺源"; "去哪儿玩": a question, no name
    r"(?:了\s*)?(?:去|到)?(?!哪|什么|谁|几)" + _ZH_RUN + _ZH_STOP
)
_ZH_REPORTS = re.compile(r"向(?P<v>[\u4e00-\u9fff]{2,3})汇报")


def zh_names(text: str) -> list[tuple[str, str, int, int]]:
    """Chinese (and Latin-in-Chinese) names in ``text``: (kind, normalised, start, end), best
    first (a later one overlapping an earlier one is dropped by the caller)."""
    out: list[tuple[str, str, int, int]] = []
    for m in _ZH_REPORTS.finditer(text):
        out.append(("name:person", m.group("v"), m.start("v"), m.end("v")))
    for m in _ZH_PERSON.finditer(text):
        g = "v" if m.group("v") else "w"
        out.append(("name:person", m.group(g), m.start(g), m.end(g)))
    for m in _ZH_ROLE_PERSON.finditer(text):
        out.append(("name:person", m.group("v"), m.start("v"), m.end("v")))
    for m in _ZH_TITLED_PERSON.finditer(text):
        out.append(("name:person", m.group("v"), m.start("v"), m.end("v")))
    for m in _LATIN_IN_ZH.finditer(text):
        out.append(("name:product", m.group(0).lower(), m.start(), m.end()))
    for m in _QUOTED_ZH.finditer(text):
        out.append(("name", m.group(1).lower(), m.start(1), m.end(1)))
    for m in _ZH_PRODUCT.finditer(text):
        out.append(("name:product", m.group("v").lower(), m.start("v"), m.end("v")))
    for pattern in (_ZH_PLACE, _ZH_VENUE):
        for m in pattern.finditer(text):
            out.append(("name:place", m.group("v"), m.start("v"), m.end("v")))
    for pattern in (_ZH_LABELLED, _ZH_OBJECTS):
        for m in pattern.finditer(text):
            out.append(("name", m.group("v").lower(), m.start("v"), m.end("v")))
    return out


__all__ = ["zh_names"]
