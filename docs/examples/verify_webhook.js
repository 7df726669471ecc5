// Verify a Herald webhook in Node (no dependencies). Usage in an HTTP handler:
//   read the RAW body as a Buffer first, then: verify(secret, rawBody, req.headers)
const crypto = require("crypto");

const TOLERANCE_SECONDS = 300;
const seen = new Map(); // deliveryId -> expiry; use a shared store (Redis) in production

function verify(secret, rawBody, headers, now = Date.now() / 1000) {
  const id = headers["x-service-delivery-id"];
  const timestamp = Number(headers["x-service-timestamp"]);
  const signature = headers["x-service-signature"] || "";
  if (!id || !Number.isInteger(timestamp)) return false;
  if (Math.abs(now - timestamp) > TOLERANCE_SECONDS) return false;
  const signed = Buffer.concat([Buffer.from(`${timestamp}.${id}.`, "utf8"), rawBody]);
  const expected = "v1=" + crypto.createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(signed).digest("hex");
  const a = Buffer.from(signature, "utf8");
  const b = Buffer.from(expected, "utf8");
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) return false;
  if (seen.has(id)) return "duplicate"; // a retry of a delivery already handled
  seen.set(id, now + TOLERANCE_SECONDS);
  return true;
}

module.exports = { verify };

if (require.main === module) {
  // node verify_webhook.js SECRET BODY_BASE64 TIMESTAMP DELIVERY_ID SIGNATURE
  const [secret, body, timestamp, id, signature] = process.argv.slice(2);
  const headers = { "x-service-timestamp": timestamp, "x-service-delivery-id": id,
                    "x-service-signature": signature };
  const result = verify(secret, Buffer.from(body, "base64"), headers);
  process.stdout.write(String(result));
}
