/** A logger at debug level whose lines are kept for the test to read. */
import { createLogger, type Logger } from "../../services/lib/log.ts";

export interface CapturedLog {
  log: Logger;
  lines: string[];
  /** Parsed records whose msg contains the text. */
  find(text: string): Record<string, unknown>[];
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const log = createLogger("debug", {}, (line) => lines.push(line));
  return {
    log,
    lines,
    find: (text) => lines.map((l) => JSON.parse(l)).filter((r) => String(r.msg).includes(text)),
  };
}
