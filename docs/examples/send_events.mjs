// Send a signed batch to Questwall (Node.js 18+, no dependencies).
//   QUESTWALL_URL=http://localhost:8000 QUESTWALL_GAME_ID=… QUESTWALL_CLIENT_ID=… \
//   QUESTWALL_CLIENT_SECRET=… node send_events.mjs
import { createHmac } from "node:crypto";

const baseUrl = process.env.QUESTWALL_URL ?? "http://localhost:8000";
const gameId = process.env.QUESTWALL_GAME_ID;
const clientId = process.env.QUESTWALL_CLIENT_ID;
const clientSecret = process.env.QUESTWALL_CLIENT_SECRET;

async function send(payload) {
  const body = JSON.stringify(payload); // sign exactly the bytes you send
  const timestamp = Date.now().toString();
  const signature = createHmac("sha256", clientSecret)
    .update(clientId + timestamp + body)
    .digest("hex");
  const response = await fetch(`${baseUrl}/v2/custom-events`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "x-client-id": clientId,
      "x-timestamp": timestamp,
      "x-signature": signature,
    },
    body,
  });
  return { status: response.status, answer: await response.json() };
}

const time = new Date().toISOString(); // e.g. 2026-11-21T10:00:00.000Z
const { status, answer } = await send({
  gameId,
  events: [
    { userId: "player-2", event: "GAME_END", time, traits: { kills: 12 } },
    { userId: "player-2", event: "GAME_OVER", time, value: 1800 },
  ],
  identifiers: [{ userId: "player-2", discordId: "80351110224678912" }],
});
console.log(status, answer.message, JSON.stringify(answer.accepted), JSON.stringify(answer.rejected));
if (answer.message !== "OK") process.exit(1);
