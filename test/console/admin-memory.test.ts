import { memoryStore } from "merchant-webhooks";
import { adminContract } from "./admin-contract.js";

adminContract("memory", async () => ({ store: memoryStore(), cleanup: async () => {} }));
