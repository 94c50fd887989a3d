import { webhook } from "../../webhook.js";

// POST /webhooks/subscriptions. GET is exported too so a stray GET gets the library's JSON 405 rather
// than Next's empty one.
export const { POST, GET } = webhook;
