"""Differential test: our renderer against handlebars.js (npm `handlebars`) under node.

The npm package is installed once into tests/.node (git-ignored). The test is skipped,
with the reason shown, only where node or npm is missing or the install fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.rendering import compile_parts, render_part

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / ".node"
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
