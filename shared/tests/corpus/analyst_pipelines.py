# Generates analyst_pipelines.json (run from this folder: python3 analyst_pipelines.py): the
# execute_aggregation corpus of issue 24 — the seed questions, heavy-but-valid pipelines and
# the bypass classes. Read by tests/analyst_budget.rs and examples/bench_pipelines.rs.
import json
C=[]
def add(name, p, conn="don_hang"): C.append({"name":name,"connection":conn,"pipeline":p})
L=lambda lf,ff,a,frm="don_hang": {"$lookup":{"from":frm,"localField":lf,"foreignField":ff,"as":a}}
add("seed: revenue in January", [{"$match":{"ngay":{"$gte":"2024-01-01","$lte":"2024-01-31T23:59:59"}}},{"$group":{"_id":None,"total":{"$sum":"$doanh_thu"}}}])
add("seed: top 3 products", [{"$group":{"_id":"$san_pham","qty":{"$sum":"$so_luong"}}},{"$sort":{"qty":-1}},{"$limit":3}])
add("seed: revenue by month", [{"$project":{"m":{"$month":"$ngay"},"doanh_thu":1}},{"$group":{"_id":"$m","total":{"$sum":"$doanh_thu"}}},{"$sort":{"_id":1}}])
add("seed: platform x product stats", [{"$group":{"_id":{"p":"$nen_tang","s":"$san_pham"},"avg":{"$avg":"$doanh_thu"},"min":{"$min":"$doanh_thu"},"max":{"$max":"$doanh_thu"},"n":{"$count":{}}}},{"$sort":{"avg":-1}}])
add("seed: revenue by day string", [{"$group":{"_id":{"$dateToString":{"format":"%Y-%m-%d","date":"$ngay"}},"t":{"$sum":"$doanh_thu"}}},{"$sort":{"t":-1}},{"$limit":10}])
add("join: salaries by department", [L("phong_ban","phong_ban","cung_phong","luong_nhan_vien"),{"$unwind":"$cung_phong"},{"$count":"n"}], "luong_nhan_vien")
add("lookup: missing key matches every row", [L("khong_co","khong_co","j")])
add("lookup: missing key + unwind", [L("khong_co","khong_co","j"),{"$unwind":"$j"}])
add("lookup: missing key + unwind + group", [L("khong_co","khong_co","j"),{"$unwind":"$j"},{"$group":{"_id":"$j.san_pham","n":{"$sum":1}}}])
add("lookup: null local vs missing foreign + unwind + count", [{"$project":{"x":None,"san_pham":1}},L("x","khong_co","j"),{"$unwind":"$j"},{"$count":"n"}])
add("lookup: low-cardinality key (platform) fan-out", [L("nen_tang","nen_tang","j")])
add("lookup: platform fan-out + unwind + sort", [L("nen_tang","nen_tang","j"),{"$unwind":"$j"},{"$sort":{"j.doanh_thu":-1,"doanh_thu":1}}])
add("lookup: product self-join + unwind + group", [L("san_pham","san_pham","j"),{"$unwind":"$j"},{"$group":{"_id":"$san_pham","n":{"$sum":1},"t":{"$sum":"$j.doanh_thu"}}}])
add("lookup: chain of five on a missing key", [L("khong_co","khong_co",f"j{i}") for i in range(5)])
add("lookup: twenty stages rewriting one alias", [L("khong_co","khong_co","j") for i in range(20)])
add("lookup: keyed on the joined array", [L("nen_tang","nen_tang","j"),L("j","j","k")])
add("lookup: after $limit 1 (small)", [{"$limit":1},L("khong_co","khong_co","j"),{"$unwind":"$j"},{"$count":"n"}])
def concat_chain(n, limit=True):
    st=[{"$limit":1}] if limit else []
    st.append({"$project":{"s":"$san_pham"}})
    for i in range(n): st.append({"$project":{"s":{"$concat":["$s","$s","$s","$s"]}}})
    return st
add("concat: 4x chain, 6 stages, one row", concat_chain(6))
add("concat: 4x chain, 11 stages, one row", concat_chain(11))
add("concat: 4x chain, 13 stages, one row", concat_chain(13))
add("concat: 4x chain, 6 stages, every row", concat_chain(6, False))
e="$san_pham"
for i in range(5): e={"$concat":[e,e,e,e]}
add("concat: five nested 4x levels in one expression, every row", [{"$project":{"s":e}}])
e="$san_pham"
for i in range(8): e={"$concat":[e,e]}
add("concat: eight nested doublings, every row, then toUpper", [{"$project":{"s":{"$toUpper":e}}}])
add("concat: substr of a grown string", concat_chain(9)+[{"$project":{"s":{"$substr":["$s",0,100000000]}}}])
add("group: push every row's joined array", [L("nen_tang","nen_tang","j"),{"$group":{"_id":None,"a":{"$push":"$j"}}}])
add("group: many push accumulators", [{"$group":{"_id":"$nen_tang", **{f"p{i}":{"$push":{"a":"$san_pham","b":"$ngay","c":"$doanh_thu"}} for i in range(12)}}}])
add("group: key is a joined array", [L("nen_tang","nen_tang","j"),{"$group":{"_id":"$j","n":{"$sum":1}}}])
add("group: unique keys then sort", [{"$group":{"_id":{"d":"$ngay","s":"$san_pham","p":"$nen_tang","q":"$so_luong"},"t":{"$sum":"$doanh_thu"}}},{"$sort":{"t":-1,"_id":1}}])
add("unwind: pushed arrays back out, then join each", [{"$group":{"_id":"$nen_tang","xs":{"$push":"$san_pham"}}},{"$unwind":"$xs"},L("xs","san_pham","j"),{"$unwind":"$j"},{"$count":"n"}])
add("unwind: preserve empty on a missing field", [{"$unwind":{"path":"$khong_co","preserveNullAndEmptyArrays":True}},{"$count":"n"}])
e="$doanh_thu"
for i in range(14): e={"$add":[e,1]}
add("expr: fourteen nested $add", [{"$project":{"x":e}},{"$group":{"_id":None,"s":{"$sum":"$x"}}}])
add("expr: wide $add of 400 terms", [{"$project":{"x":{"$add":["$doanh_thu"]*400}}},{"$sort":{"x":-1}}])
c="$doanh_thu"
for i in range(6): c={"$cond":{"if":{"$gt":["$so_luong",i%5]},"then":c,"else":{"$multiply":[c,2]}}}
add("expr: nested $cond", [{"$project":{"x":c}},{"$sort":{"x":1}}])
add("expr: big literal per row", [{"$project":{"x":"y"*4000,"z":["w"*1000]*8}}])
add("match: $in with 3000 values", [{"$match":{"doanh_thu":{"$in":list(range(0,3000000,1000))}}},{"$count":"n"}])
add("match: $or of 300 branches", [{"$match":{"$or":[{"so_luong":i} for i in range(300)]}},{"$count":"n"}])
add("match: on a joined array field", [L("nen_tang","nen_tang","j"),{"$match":{"j":{"$in":[{"x":i} for i in range(50)]}}}])
for p,o in [("(a|aa)*b",""),("(.*)*x","s"),("\\w{6}z","i"),("[a-zà-ỹ]{1,40}q","i"),("(x+x+)+y",""),("^(\\w+\\s?)*$","i"),(".{0,60}[0-9]{3}","s"),("(?:a|b|c|d|e|f|g|h|i|j|k|l|m|n)+\\d","i")]:
    add(f"regex: {p}", [{"$match":{"san_pham":{"$regex":p,"$options":o}}},{"$count":"n"}])
add("regex: over grown strings", concat_chain(8, False)[:1]+[{"$project":{"s":{"$concat":["$san_pham"]*64}}},{"$match":{"s":{"$regex":"(?:\\w{3}\\s?){4,}Z","$options":"i"}}},{"$count":"n"}])
add("regex: $or of 40 patterns", [{"$match":{"$or":[{"san_pham":{"$regex":f"[a-z]{{{i}}}z","$options":"i"}} for i in range(1,41)]}},{"$count":"n"}])
add("sort: every row by five keys", [{"$sort":{"nen_tang":1,"san_pham":-1,"ngay":1,"so_luong":-1,"doanh_thu":1}}])
add("sort: huge intermediate set", [L("khong_co","khong_co","j"),{"$unwind":"$j"},{"$sort":{"j.doanh_thu":1}}])
add("project: twenty stages copying every row", [{"$project":{"ngay":1,"nen_tang":1,"san_pham":1,"so_luong":1,"doanh_thu":1}} for _ in range(20)])
add("count after fan-out on quantity", [L("so_luong","so_luong","j"),{"$unwind":"$j"},{"$count":"n"}])
add("facet (not supported)", [{"$facet":{"a":[{"$match":{}}]}}])
add("21 stages (over the stage cap)", [{"$match":{}}]*21)
s=json.dumps(C, ensure_ascii=False, indent=None)
assert len(s) < 2_000_000, len(s)
open("analyst_pipelines.json","w").write(s.replace('}, {"name"','},\n{"name"'))
print(len(C), len(s))
