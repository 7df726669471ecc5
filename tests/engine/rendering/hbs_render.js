// Renders a batch of templates with handlebars.js for the differential test.
// stdin: JSON [{"template": str, "data": {key: value}, "partials": {name: str}?}];
// stdout: JSON [{"out"} | {"error"}].
"use strict";
const path = require("path");
const Handlebars = require(path.resolve(process.argv[2], "node_modules", "handlebars"));

const str = (v) => (v === null || v === undefined ? "" : String(v));
Handlebars.registerHelper("uppercase", (v) => str(v).toUpperCase());
Handlebars.registerHelper("lowercase", (v) => str(v).toLowerCase());
Handlebars.registerHelper("ifEquals", function (a, b, options) {
  return str(a) === str(b) ? options.fn(this) : options.inverse(this);
});
Handlebars.registerHelper("log", () => undefined);

let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map(({ template, data, partials }) => {
    try {
      return { out: Handlebars.compile(template)(data, { partials: partials || {} }) };
    } catch (err) {
      return { error: String(err.message || err) };
    }
  });
  process.stdout.write(JSON.stringify(results));
});
