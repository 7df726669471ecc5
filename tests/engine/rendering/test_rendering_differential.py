"""Differential test: our renderer against handlebars.js (npm `handlebars`) under node.

The npm package is installed once into tests/.node (git-ignored). The test is skipped,
with the reason shown, only where node or npm is missing or the install fails.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.rendering import RenderError, compile_parts, render_part

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parents[1] / ".node"
HANDLEBARS = "handlebars@4.7.8"

PEOPLE = {"name": "Bob <b>", "first": "Ada", "Last": "Lovelace", "empty": "", "zero": "0",
          "flag": "false", "amp": "a & b = c 'q' \"d\" `e`", "uni": "héllo wörld ☃",
          "count": "5", "url": "https://example.com/?a=1&b=2", "7": "seven", "2": "two"}
FLAT = {"a": "x", "b": "y"}

CORPUS: list[tuple[str, dict[str, str]]] = [
    ("Hello {{name}}!", PEOPLE),
    ("Hello {{{name}}} and {{&name}}", PEOPLE),
    ("{{amp}}|{{{amp}}}", PEOPLE),
    ("{{url}}", PEOPLE),
    ("{{missing}}[{{missing.deeper}}]", PEOPLE),
    ("{{first}} {{Last}}", PEOPLE),
    ("{{this.first}} {{./first}} {{this/first}}", PEOPLE),
    ("{{#if name}}yes{{else}}no{{/if}}", PEOPLE),
    ("{{#if empty}}yes{{else}}no{{/if}}", PEOPLE),
    ("{{#if zero}}yes{{else}}no{{/if}} {{#if flag}}t{{/if}}", PEOPLE),
    ("{{#unless missing}}none{{else}}some{{/unless}}", PEOPLE),
    ("{{#if 0}}a{{else}}b{{/if}}{{#if true}}c{{/if}}{{#if null}}d{{/if}}", PEOPLE),
    ("{{#ifEquals count 5}}five{{else}}other{{/ifEquals}}", PEOPLE),
    ("{{#ifEquals count \"6\"}}six{{else}}not six{{/ifEquals}}", PEOPLE),
    ("{{#ifEquals missing \"\"}}blank{{/ifEquals}}", PEOPLE),
    ("{{uppercase first}} {{lowercase Last}} {{uppercase uni}}", PEOPLE),
    ("{{uppercase (lowercase name)}}", PEOPLE),
    ("{{lookup this \"first\"}} {{lookup . 'Last'}} {{lookup @root \"7\"}}", PEOPLE),
    ("{{lookup name 0}}{{lookup name 1}}{{lookup name 99}}", PEOPLE),
    ("{{name.length}} {{uni.length}} {{#if empty.length}}x{{else}}empty{{/if}}", PEOPLE),
    ("{{#with first}}{{this}} {{length}} {{../Last}}{{/with}}", PEOPLE),
    ("{{#with missing}}x{{else}}no {{first}}{{/with}}", PEOPLE),
    ("{{#with 0}}[{{this}}]{{/with}}{{#with \"\"}}x{{else}}e{{/with}}", PEOPLE),
    ("{{#each this}}{{@index}}:{{@key}}={{this}};{{/each}}", PEOPLE),
    ("{{#each this}}{{#if @first}}[{{/if}}{{@key}}{{#if @last}}]{{else}},{{/if}}{{/each}}",
     PEOPLE),
    ("{{#each @root}}{{@key}}-{{../first}}{{@root.Last}} {{/each}}", FLAT),
    ("{{#each this}}{{#each ../this}}{{@key}}{{@index}}{{/each}}/{{/each}}", FLAT),
    ("{{#each this}}{{#with this}}{{this}}{{../b}}{{/with}}{{/each}}", FLAT),
    ("{{#each name}}x{{else}}not a list{{/each}}", PEOPLE),
    ("{{#each missing}}x{{/each}}done", PEOPLE),
    ("{{#each this}}{{/each}}{{#each this}}x{{else}}e{{/each}}", {}),
    ("{{@index}}{{@key}}{{@first}}", PEOPLE),
    ("{{this}} {{{.}}}", PEOPLE),
    ("{{uppercase 1.50}} {{uppercase -3}} {{uppercase true}} {{uppercase null}}", PEOPLE),
    ("{{lookup false \"x\"}}{{lookup \"\" \"x\"}}{{lookup 0 \"x\"}}", PEOPLE),
    ("{{uppercase \"say \\\"hi\\\"\"}} {{uppercase 'it\\'s'}}", PEOPLE),
    ("a {{! comment }} b {{!-- long }} comment --}} c", PEOPLE),
    ("  {{! standalone comment }}  \nnext", PEOPLE),
    ("{{~name~}} | {{~ first ~}} |  {{~Last}}", PEOPLE),
    ("<p>\n  {{~#if name~}}\n    {{first}}\n  {{~else~}}\n    none\n  {{~/if~}}\n</p>", PEOPLE),
    ("\\{{name}} \\\\{{first}} x\\{{a}}{{Last}}", PEOPLE),
    ("<ul>\n  {{#each this}}\n  <li>{{@key}}: {{this}}</li>\n  {{/each}}\n</ul>\n", FLAT),
    ("{{#if name}}\n  line\n{{else}}\n  other\n{{/if}}\n", PEOPLE),
    ("{{#if name}}\r\n  crlf\r\n{{/if}}\r\nend", PEOPLE),
    ("\t{{#if name}}\t\n\tx\n\t{{/if}}\t\n", PEOPLE),
    ("{{#if name}}a{{/if}}\n{{#if name}}\nb\n{{/if}}", PEOPLE),
    ("text {{#if name}}\ninline open\n{{/if}} after", PEOPLE),
    ("{{#if name}}\n{{#if first}}\n  nested\n{{/if}}\n{{/if}}\n", PEOPLE),
    ("{{#if missing}}\n  a\n{{else}}\n  b\n{{/if}}", PEOPLE),
    ("  {{#each this}}  \n{{this}}\n  {{/each}}  ", FLAT),
    ("{{else_x}}{{elsewhere}}", {"else_x": "1", "elsewhere": "2"}),
    ("{{ name }} {{ uppercase  first }}", PEOPLE),
    ("{{!-- a --~}}   x   {{~! b }}", PEOPLE),
    ("a{{!--}}b{{!---}}c{{!-- x -- y --}}d", PEOPLE),
    ("{{~{name}~}} {{~{first}}}", PEOPLE),
    ("{{#with first}}{{#with ../Last}}{{this}}-{{../this}}-{{../../name}}{{/with}}{{/with}}",
     PEOPLE),
    ("{{#each this}}{{#ifEquals @key \"b\"}}B={{this}}{{else}}{{@key}}{{/ifEquals}}{{/each}}",
     FLAT),
    ("{{uni}}{{{uni}}}", PEOPLE),
    ("{{#if name}}{{#unless empty}}{{uppercase first}}{{/unless}}{{/if}}", PEOPLE),
    ("<html>\n<head>\n{{#if first}}\n<title>{{first}}</title>\n{{/if}}\n</head>\n"
     "<body>\n{{#each this}}\n  <div class=\"row\" data-key=\"{{@key}}\">\n"
     "    {{#if this}}\n    <span>{{this}}</span>\n    {{else}}\n    <i>empty</i>\n"
     "    {{/if}}\n  </div>\n{{/each}}\n</body>\n</html>\n", PEOPLE),
]


@pytest.fixture(scope="session")
def handlebars_dir() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node and npm are needed for the handlebars.js differential test")
    if not (NODE_DIR / "node_modules" / "handlebars" / "package.json").exists():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(
                [npm, "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund",
                 HANDLEBARS], capture_output=True, text=True, timeout=300, check=False)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install handlebars timed out")
        if proc.returncode != 0:
            pytest.skip(f"npm install handlebars failed: {proc.stderr.strip()[-300:]}")
    return NODE_DIR


def _handlebars_js(handlebars_dir: Path, cases: list[tuple[str, dict[str, str]]]) -> list:
    payload = json.dumps([{"template": t, "data": d} for t, d in cases])
    proc = subprocess.run(["node", str(HERE / "hbs_render.js"), str(handlebars_dir)],
                          input=payload, capture_output=True, text=True, timeout=60,
                          check=True)
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def expected(handlebars_dir: Path) -> list:
    return _handlebars_js(handlebars_dir, CORPUS)


@pytest.mark.parametrize("index", range(len(CORPUS)), ids=lambda i: repr(CORPUS[i][0][:30]))
def test_matches_handlebars_js(index: int, expected: list) -> None:
    template, data = CORPUS[index]
    reference = expected[index]
    assert "error" not in reference, reference
    stored = compile_parts({"body": template})
    assert render_part(stored, "body", template, data) == reference["out"]
    assert render_part(None, "body", template, data) == reference["out"]


def test_case_insensitive_lookup_matches_handlebars_on_lowercased_data(
        handlebars_dir: Path) -> None:
    # Our lookups ignore case; handlebars.js does when keys and references agree in case.
    template = "{{name}} {{#each this}}{{@key}}={{this}} {{/each}}"
    (reference,) = _handlebars_js(handlebars_dir, [(template, {"name": "Ann", "x": "1"})])
    assert render_part(None, "body", template.replace("name", "NAME"),
                       {"Name": "Ann", "x": "1"}) == reference["out"].replace("name", "Name")


# -- generated corpora ------------------------------------------------------------------
_TEXTS = ["", " ", "\n", "  \n", "x", "a b", "\r\n", "\t", " \n  ", "<p>", "&"]
_VARS = ["name", "first", "this", "missing", "@index", "@key", "../name", "@root.first",
         "this.name", "empty", "name.length", "@first", "@last"]
_ARGS = ["name", "empty", "this", "@root", "missing", "first", "@first", "@last"]


def _tilde(r: random.Random) -> str:
    return "~" if r.random() < 0.2 else ""


def _expr(r: random.Random) -> str:
    k = r.random()
    if k < 0.6:
        return r.choice(_VARS)
    if k < 0.8:
        return f"uppercase {r.choice(_VARS)}"
    return f"lookup {r.choice(['this', '@root', '..', '.'])} \"{r.choice(['name', 'x'])}\""


def _node(r: random.Random, depth: int) -> str:
    k = r.random()
    if k < 0.35:
        return r.choice(_TEXTS)
    if k < 0.6:
        if r.random() < 0.2:
            return "{{" + _tilde(r) + "{" + _expr(r) + "}" + _tilde(r) + "}}"
        return "{{" + _tilde(r) + _expr(r) + _tilde(r) + "}}"
    if k < 0.68:
        return "{{" + _tilde(r) + "! c " + _tilde(r) + "}}"
    if depth > 3:
        return r.choice(_TEXTS)
    helper = r.choice(["if", "unless", "each", "with", "ifEquals"])
    arg = r.choice(_ARGS)
    if helper == "ifEquals":
        arg += " " + r.choice(["name", '"Ada"', "first"])
    out = "{{" + _tilde(r) + "#" + helper + " " + arg + _tilde(r) + "}}"
    out += "".join(_node(r, depth + 1) for _ in range(r.randint(0, 4)))
    if r.random() < 0.4:
        out += "{{" + _tilde(r) + "else" + _tilde(r) + "}}"
        out += "".join(_node(r, depth + 1) for _ in range(r.randint(0, 3)))
    return out + "{{" + _tilde(r) + "/" + helper + _tilde(r) + "}}"


_SOUP = ["{{", "}}", "{{{", "}}}", "~", "#if ", "#each ", "/if", "/each", "else", "!", "--",
         "name", ".", "/", "..", "this", "@index", "@root", " ", "\n", "\\", '"s"', "'q'",
         "(", ")", "uppercase ", "lookup ", "1", "-2.5", "true", "null", "&", "x", "=", "|",
         "[", "]", "^", ">", "as "]
_GEN_DATA = {"name": "Bob <b>", "first": "Ada", "empty": "", "x": "X"}


def test_generated_templates_match_handlebars_js(handlebars_dir: Path) -> None:
    r = random.Random(20260305)
    cases = ["".join(_node(r, 0) for _ in range(r.randint(1, 6))) for _ in range(1500)]
    results = _handlebars_js(handlebars_dir, [(t, _GEN_DATA) for t in cases])
    for template, reference in zip(cases, results, strict=True):
        assert "out" in reference, (template, reference)
        assert render_part(None, "body", template, _GEN_DATA) == reference["out"], template


def test_random_soup_is_never_accepted_where_handlebars_js_refuses(
        handlebars_dir: Path) -> None:
    r = random.Random(7)
    cases = ["".join(r.choice(_SOUP) for _ in range(r.randint(1, 14))) for _ in range(4000)]
    results = _handlebars_js(handlebars_dir, [(t, _GEN_DATA) for t in cases])
    accepted = 0
    for template, reference in zip(cases, results, strict=True):
        try:
            ours = render_part(None, "body", template, _GEN_DATA)
        except RenderError:
            continue
        accepted += 1
        assert reference.get("out") == ours, (template, reference)
    assert accepted > 1000
