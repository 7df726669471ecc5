# TEMP local stub, never committed
import json


class TemplateSyntaxError(ValueError):
    pass
class RenderError(Exception):
    pass
def check_template(text):
    if text.count("{{") != text.count("}}"):
        raise TemplateSyntaxError("line 1, column 1: unclosed mustache")
def compile_parts(parts):
    for t in parts.values(): check_template(t)
    return json.dumps({"stub": parts})
