import { type Logger, pino } from "pino";

/** A real pino logger whose lines are kept in memory, parsed, for assertions on what was logged. */
export function captureLogger(): { logger: Logger; lines: () => Record<string, any>[]; text: () => string } {
  const raw: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void raw.push(line) });
  return {
    logger,
    lines: () => raw.map((line) => JSON.parse(line)),
    text: () => raw.join(""),
  };
}

export const silentLogger = () => pino({ level: "silent" });
