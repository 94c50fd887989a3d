import express from "express";
import { GUARDED_BODY_LIMIT, guardedHandWrittenRoute } from "./hand-written.js";
import { serve } from "./serve.js";

// "Hand-written, same guarantees" on Express: express.json() with the body limit, then the guarded route.
const route = await guardedHandWrittenRoute();
const app = express();
app.post("/hook", express.json({ limit: GUARDED_BODY_LIMIT }), async (req, res) => {
  const { status, answer } = await route(req.body);
  res.status(status).json(answer);
});
serve(app);
