"""The inspector page's style sheet, inlined into every page.

Input: nothing. Output: ``STYLE`` (CSS text) and ``PALETTE`` (one colour per
category, the Okabe-Ito set: distinguishable with the common colour-vision
deficiencies; every colour is also named in text next to it).

System fonts only: a page that fetched a font would not open offline.
"""

from __future__ import annotations

__all__ = ["PALETTE", "STYLE"]

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999933", "#332288")

_CATEGORY_RULES = "\n".join(f".c{i}{{background:{colour}}}" for i, colour in enumerate(PALETTE))

STYLE = (
    """
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--paper:#ffffff;--wash:#f6f8fa;
--ok:#1a7f37;--bad:#b42318;--warn:#9a6700;--info:#0550ae;--odd:#6639ba}
*{box-sizing:border-box}
html{font-size:15px}
body{margin:0;color:var(--ink);background:var(--paper);line-height:1.45;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header,main,footer{max-width:1180px;margin:0 auto;padding:0 24px}
header{padding-top:20px}
h1{font-size:1.6rem;margin:.2rem 0 .4rem;display:flex;gap:.6rem;align-items:center;
flex-wrap:wrap}
h1 .why{font-size:1rem;font-weight:400}
h2{font-size:1.15rem;margin:1.6rem 0 .5rem;padding-bottom:.25rem;
border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1rem 0 .35rem}
p{margin:.35rem 0}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}
.kicker{color:var(--muted);text-transform:uppercase;letter-spacing:.08em;font-size:.78rem;
margin:0}
.scenario{font-size:1.02rem}
.boundary{color:var(--muted)}
.note{border-left:4px solid var(--warn);background:#fff8e6;padding:.5rem .75rem;
margin:.75rem 0}
.badge{display:inline-block;border-radius:999px;padding:.05rem .6rem;font-size:.8rem;
font-weight:600;border:1px solid currentColor;white-space:nowrap}
.s-bundle{color:var(--ok)}.s-refused{color:var(--bad)}.s-undecided{color:var(--warn)}
.l-confirmed{color:var(--ok)}.l-informational{color:var(--info)}
.l-potential{color:var(--warn)}.l-unknown{color:var(--odd)}.l-not-evaluated{color:var(--muted)}
.f-proven{color:var(--ok)}.f-bound-only{color:var(--warn)}.f-timed-out{color:var(--bad)}
.f-not-evaluated{color:var(--muted)}
.figures{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin:.5rem 0}
.figures div{min-width:8rem}
.figures dt{color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.05em}
.figures dd{margin:0;font-size:1.05rem}
.figures .num{font-size:1.5rem;font-weight:650;font-variant-numeric:tabular-nums}
.bar{position:relative;display:flex;height:34px;border:1px solid var(--ink);
background:var(--wash);margin:.6rem 0 .3rem;overflow:hidden}
.seg{display:block;height:100%;border-right:1px solid rgba(255,255,255,.8)}
.seg.slack{background:repeating-linear-gradient(135deg,#eaeef2 0 6px,#fff 6px 12px)}
.seg.unpriced{background:repeating-linear-gradient(45deg,#eaeef2 0 6px,#fff 6px 12px)}
.seg.overrun{background:var(--bad)}
.budget-line{position:absolute;top:-1px;bottom:-1px;width:0;border-left:3px solid var(--ink)}
.over{position:absolute;top:0;bottom:0;
background:repeating-linear-gradient(135deg,rgba(180,35,24,.6) 0 6px,rgba(180,35,24,.15) 6px 12px)}
.scale{position:relative;height:1.2rem;color:var(--muted);font-size:.8rem}
.scale span{position:absolute;top:0;white-space:nowrap}
.scale .end{right:0}
.scale .mark{transform:translateX(-50%);color:var(--ink);font-weight:600}
.legend{list-style:none;padding:0;margin:.3rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;
font-size:.9rem}
.swatch{display:inline-block;width:.9rem;height:.9rem;vertical-align:-2px;margin-right:.3rem;
border:1px solid rgba(0,0,0,.25)}
.swatch.slack{background:repeating-linear-gradient(135deg,#d0d7de 0 3px,#fff 3px 6px)}
.swatch.sw-excess{background:repeating-linear-gradient(135deg,#b42318 0 3px,#f4c7c3 3px 6px)}
table{border-collapse:collapse;width:100%;margin:.3rem 0 .8rem;font-size:.9rem}
caption{text-align:left;color:var(--muted);font-size:.85rem;padding:.2rem 0}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);
vertical-align:top}
th{background:var(--wash);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:hover{background:#fbfcfd}
td.id{white-space:nowrap}
tbody th{background:none;font-weight:600}
.why{color:var(--muted)}
.cfs{display:grid;grid-template-columns:repeat(auto-fill,minmax(30rem,1fr));gap:.6rem}
.cf{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem}
.cf h4{margin:0 0 .25rem;font-size:.95rem}
.cf ul{margin:.2rem 0;padding-left:1.2rem}
.diagnostics{list-style:none;padding:0}
.diagnostics li{display:grid;grid-template-columns:9.5rem 11rem 1fr;gap:.6rem;
padding:.35rem 0;border-bottom:1px solid var(--line)}
.topic{font-weight:600}
footer{color:var(--muted);font-size:.85rem;padding-bottom:2rem;margin-top:2rem}
footer p{margin:.2rem 0}
.more{color:var(--muted);font-style:italic}
@media (max-width:720px){.diagnostics li{grid-template-columns:1fr}}
@media print{.bar{border-color:#000}a{color:inherit}}
"""
    + _CATEGORY_RULES
    + "\n"
)
