"""An interactive API page served by Herald itself: no CDN, no external script."""

from __future__ import annotations

from flask import Blueprint, Response

blueprint = Blueprint("docs", __name__)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f7f8fa}
header{background:#1d2330;color:#fff;padding:1rem 2rem}main{padding:1rem 2rem;max-width:70rem}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:1rem 0;padding:1rem}
.m{font-weight:700;padding:.1rem .5rem;border-radius:3px;color:#fff;margin-right:.5rem}
.post{background:#2b7a4b}.get{background:#2b5f9e}
textarea{width:100%;height:12rem;font:13px monospace}
h2,p{overflow-wrap:anywhere}section{min-width:0}
input{width:28rem;max-width:100%;font:13px monospace}
pre{background:#f1f3f6;padding:.6rem;overflow:auto;
max-height:24rem}button{margin-top:.4rem}
</style></head><body>
<header><h1>Herald API <small id="v"></small></h1>
<p>OpenAPI document: <a style="color:#9cf" href="/openapi/v1.json">/openapi/v1.json</a></p>
</header><main>
<p><label for="key">X-Api-Key</label>: <input id="key" placeholder="hk_..." autocomplete="off"></p>
<div id="ops"></div></main>
<script>
"use strict";
function el(tag, attrs, text){const e=document.createElement(tag);
  for(const [k,v] of Object.entries(attrs||{})) e.setAttribute(k,v);
  if(text!==undefined) e.textContent=text; return e;}
fetch("/openapi/v1.json").then(r=>r.json()).then(spec=>{
  document.getElementById("v").textContent="v"+spec.info.version;
  const ops=document.getElementById("ops");
  for(const [path,item] of Object.entries(spec.paths)){
    for(const [method,op] of Object.entries(item)){
      const s=el("section"); const h=el("h2");
      h.append(el("span",{class:"m "+method},method.toUpperCase()), path);
      s.append(h, el("p",{},op.summary||""));
      const codes=el("p",{},"Responses: "+Object.keys(op.responses).join(", ")); s.append(codes);
      let body=null;
      if(op.requestBody){const ex=op.requestBody.content["application/json"].example;
        body=el("textarea",{"aria-label":"Request body of "+method.toUpperCase()+" "+path});
        body.value=JSON.stringify(ex,null,2); s.append(body);}
      const out=el("pre"); const b=el("button",{},"Try it");
      b.onclick=async()=>{const headers={"Content-Type":"application/json"};
        const key=document.getElementById("key").value; if(key) headers["X-Api-Key"]=key;
        const r=await fetch(path,{method:method.toUpperCase(),headers,
          body:body?body.value:undefined});
        const t=await r.text(); let shown=t;
        try{shown=JSON.stringify(JSON.parse(t),null,2);}catch(e){}
        out.textContent=r.status+" "+r.statusText+"\\n\\n"+shown;};
      s.append(b,out); ops.append(s);}}});
</script></body></html>"""


@blueprint.get("/docs")
def docs() -> Response:
    return Response(PAGE, mimetype="text/html",
                    headers={"Content-Security-Policy": "default-src 'self'; "
                             "script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'"})
