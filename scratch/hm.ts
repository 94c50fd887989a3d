import { createHmac, createSecretKey, hash } from "node:crypto";
import { canonicalJson } from "../src/receiver/canonical-json.ts";
import { notificationText } from "../bench/notification-body.ts";
const key = Buffer.from("merchant-webhooks payload fingerprint v1");
const sk = createSecretKey(key);
const block = Buffer.alloc(64); key.copy(block);
const ipad = Buffer.from(block.map((b) => b ^ 0x36)); const opad = Buffer.from(block.map((b) => b ^ 0x5c));
const N = 20000;
const texts = Array.from({ length: N }, (_, i) => canonicalJson(JSON.parse(notificationText(`x-${i}`))));
const manual = (text: string) => {
  const m = Buffer.from(text, "utf8");
  const inner = hash("sha256", Buffer.concat([ipad, m], 64 + m.length), "buffer") as unknown as Buffer;
  return hash("sha256", Buffer.concat([opad, inner], 96), "hex");
};
console.log(manual(texts[0]!) === createHmac("sha256", key).update(texts[0]!).digest("hex"));
const t = (name: string, f: (v: string) => unknown) => { for (let r = 0; r < 3; r++) { const s = process.cpuUsage(); for (const x of texts) f(x); const u = process.cpuUsage(s); if (r === 2) console.log(name, ((u.user + u.system) / N).toFixed(2)); } };
for (let k = 0; k < 2; k++) {
t("hmac keyobject", (x) => createHmac("sha256", sk).update(x).digest("hex"));
t("hmac buffer", (x) => createHmac("sha256", key).update(x).digest("hex"));
t("manual", manual);
t("sha", (x) => hash("sha256", x, "hex"));
}
