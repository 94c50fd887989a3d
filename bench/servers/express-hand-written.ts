import express from "express";
import { handWrittenRoute } from "./hand-written.js";
import { serve } from "./serve.js";

// The hand-written reference on Express: express.json(), then the same work as the adapter.
const route = await handWrittenRoute();
const app = express();
app.post("/hook", express.json({ limit: "256kb" }), async (req, res) => {
  const { status, answer } = await route(req.body);
  res.status(status).json(answer);
});
serve(app);
