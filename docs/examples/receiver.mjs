// A postback receiver that verifies hash_key (Node.js 18+, no dependencies).
//   QUESTWALL_API_KEY=qw_ak_… HASH_PARAM=hash_key PORT=8080 node receiver.mjs
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const apiKey = process.env.QUESTWALL_API_KEY;
const hashParam = process.env.HASH_PARAM ?? "hash_key";
const seen = new Set(); // use your database: postbacks may arrive more than once

function valid(search) {
  const pairs = [...new URLSearchParams(search)]; // decoded values
  const received = (pairs.find(([k]) => k === hashParam)?.[1] ?? "").toLowerCase();
  const signed = pairs.filter(([k]) => k !== hashParam)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const message = signed.map(([k, v]) => `${k}=${v}`).join("&") + "&" + apiKey;
  const expected = createHash("sha1").update(message, "utf8").digest("hex");
  return received.length === expected.length &&
    timingSafeEqual(Buffer.from(received), Buffer.from(expected));
}

createServer((req, res) => {
  const url = new URL(req.url, "http://receiver");
  if (!valid(url.search)) {
    res.writeHead(403).end();
    return;
  }
  const tx = url.searchParams.get("tx");
  if (!seen.has(tx)) seen.add(tx); // credit the user once per transaction_id
  res.writeHead(200).end("OK");
}).listen(Number(process.env.PORT ?? 8080), "127.0.0.1");
