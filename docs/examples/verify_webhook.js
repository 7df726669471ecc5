// Verify a Herald webhook in Node (no dependencies). Usage in an HTTP handler:
//   read the RAW body as a Buffer first, then: verifyV2(secret, rawBody, req.headers, MY_URL)
//   (or verify(secret, rawBody, req.headers) for the spec's v1 signature alone).
const crypto = require("crypto");

const TOLERANCE_SECONDS = 300;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DIGITS = /^[0-9]{1,12}$/;
const seen = new Map(); // deliveryId -> expiry; use a shared store (Redis) in production

// Timestamp and delivery id exactly as Herald writes them, fresh; null for anything else
// (Number(" +17e8 ") is a number: never parse loosely).
function fields(headers, now) {
  const id = headers["x-service-delivery-id"] || "";
  const ts = headers["x-service-timestamp"] || "";
  if (!UUID.test(id) || !DIGITS.test(ts)) return null;
  if (Math.abs(now - Number(ts)) > TOLERANCE_SECONDS) return null;
  return { id, ts };
}

function same(given, expected) {
  const a = Buffer.from(given || "", "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function hmac(secret, data) {
  return crypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(data).digest("hex");
}

function dedupe(id, now) {
  if (seen.has(id)) return "duplicate"; // a retry of a delivery already handled
  seen.set(id, now + TOLERANCE_SECONDS);
  return true;
}

function verify(secret, rawBody, headers, now = Date.now() / 1000) {
  const f = fields(headers, now);
  if (!f) return false;
  const signed = Buffer.concat([Buffer.from(`${f.ts}.${f.id}.`, "utf8"), rawBody]);
  if (!same(headers["x-service-signature"], "v1=" + hmac(secret, signed))) return false;
  return dedupe(f.id, now);
}

// The stronger check: length-prefixed fields, including this endpoint's own URL.
function verifyV2(secret, rawBody, headers, url, now = Date.now() / 1000) {
  const f = fields(headers, now);
  if (!f) return false;
  const parts = [Buffer.from("herald-webhook-v2"), Buffer.from(f.ts), Buffer.from(f.id),
                 Buffer.from(url, "utf8"), rawBody];
  const signed = Buffer.concat(parts.flatMap(
    (p) => [Buffer.from(`${p.length}:`), p, Buffer.from(",")]));
  if (!same(headers["x-herald-signature"], "v2=" + hmac(secret, signed))) return false;
  return dedupe(f.id, now);
}

module.exports = { verify, verifyV2 };

if (require.main === module) {
  // node verify_webhook.js SECRET BODY_BASE64 TIMESTAMP DELIVERY_ID SIGNATURE [V2 URL]
  const [secret, body, timestamp, id, signature, v2, url] = process.argv.slice(2);
  const headers = { "x-service-timestamp": timestamp, "x-service-delivery-id": id,
                    "x-service-signature": signature, "x-herald-signature": v2 };
  const raw = Buffer.from(body, "base64");
  const result = url === undefined ? verify(secret, raw, headers)
    : verifyV2(secret, raw, headers, url);
  process.stdout.write(String(result));
}
