// A postback receiver that verifies hash_key and, when QUESTWALL_SIGNING_SECRET is set, the
// Questwall-Signature header (Node.js 18+, no dependencies).
//   QUESTWALL_API_KEY=qw_ak_… QUESTWALL_SIGNING_SECRET=qw_ps_… HASH_PARAM=hash_key PORT=8080 node receiver.mjs
// Behind a proxy that changes the scheme or host, set PUBLIC_URL to the address Questwall
// posts to (e.g. https://you.example); otherwise the URL is http:// and the Host header.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const apiKey = process.env.QUESTWALL_API_KEY;
const hashParam = process.env.HASH_PARAM ?? "hash_key";
const signingSecret = process.env.QUESTWALL_SIGNING_SECRET ?? "";
const publicUrl = process.env.PUBLIC_URL ?? "";
const tolerance = 300; // seconds between the signature's t and our clock
const seen = new Set(); // use your database: postbacks may arrive more than once

function same(a, b) { // constant time, any characters
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

function valid(search) {
  const pairs = [...new URLSearchParams(search)]; // decoded values
  const received = (pairs.find(([k]) => k === hashParam)?.[1] ?? "").toLowerCase();
  const signed = pairs.filter(([k]) => k !== hashParam)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const message = signed.map(([k, v]) => `${k}=${v}`).join("&") + "&" + apiKey;
  const expected = createHash("sha1").update(message, "utf8").digest("hex");
  return same(expected, received);
}

// t=<unix seconds>,v1=<hex HMAC-SHA256 of `${t}.${url}`>[,v1=…]: one v1 must match.
function signedByQuestwall(header, url) {
  const pairs = header.split(",").map((part) => {
    const [name, ...value] = part.trim().split("=");
    return [name, value.join("=")];
  });
  const t = pairs.findLast(([name]) => name === "t")?.[1] ?? "";
  if (!/^\d+$/.test(t) || Math.abs(Date.now() / 1000 - Number(t)) > tolerance) return false;
  const expected = createHmac("sha256", signingSecret).update(`${t}.${url}`).digest("hex");
  return pairs.some(([name, value]) => name === "v1" && same(expected, value));
}

createServer((req, res) => {
  const url = new URL(req.url, "http://receiver");
  // The URL as Questwall requested it: scheme and host, then the target as received.
  const requested = (publicUrl || `http://${req.headers.host}`) + req.url;
  const header = req.headers["questwall-signature"] ?? "";
  if (!valid(url.search) || (signingSecret && !signedByQuestwall(header, requested))) {
    res.writeHead(403).end();
    return;
  }
  // Once per transaction_id and status: "approved" credits the user, "reversed" (the
  // same transaction_id, later) takes the credit back.
  const key = `${url.searchParams.get("tx")}/${url.searchParams.get("status") ?? "approved"}`;
  if (!seen.has(key)) seen.add(key);
  res.writeHead(200).end("OK");
}).listen(Number(process.env.PORT ?? 8080), "127.0.0.1");
