// A receiver of Questwall's webhooks to your game server (docs/game-integration.md#webhooks),
// verifying each message with the Standard Webhooks library (`npm install standardwebhooks`).
//   WEBHOOK_SECRET=whsec_… PORT=8080 node webhook_receiver.mjs
// During a secret rotation, either the old or the new secret verifies: deploy the new one
// within the overlap.
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const hook = new Webhook(process.env.WEBHOOK_SECRET.replace(/^whsec_/, ""));
const seen = new Set(); // use your database: a message may arrive more than once

function handle(message) { // your game's part: grant the badge, show the progress, …
  const { type, data } = message;
  console.log(type, data.userId, data.mission?.title ?? "");
}

createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let message;
    try {
      message = hook.verify(body, request.headers); // signature and timestamp
    } catch {
      response.writeHead(400).end(); // not from Questwall, altered, or too old
      return;
    }
    const id = request.headers["webhook-id"];
    if (!seen.has(id)) { // the same webhook-id again is a retry: done already
      seen.add(id);
      handle(message);
    }
    response.writeHead(204).end(); // any 2xx: delivered
  });
}).listen(Number(process.env.PORT ?? 8080), "127.0.0.1");
