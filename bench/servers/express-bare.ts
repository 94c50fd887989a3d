import express from "express";
import { serve } from "./serve.js";

// The baseline: what a merchant would write by hand, parse JSON and answer.
const app = express();
app.post("/hook", express.json({ limit: "256kb" }), (req, res) => {
  res.json({ processed: typeof req.body?.id === "string", message: "processed" });
});
serve(app);
