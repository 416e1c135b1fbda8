import { describe, expect, it } from "vitest";
import { createLogger, maskUrl } from "./log.ts";
import { inRequest } from "./request_scope.ts";

describe("log", () => {
  it("names the request a line was written for", async () => {
    const lines: string[] = [];
    const log = createLogger("info", { service: "t" }, (line) => lines.push(line));
    log.info("outside");
    await inRequest("req-1", async () => {
      await Promise.resolve();
      log.info("inside", { n: 1 });
    });
    log.debug("below the level");
    const records = lines.map((line) => JSON.parse(line));
    expect(records).toHaveLength(2);
    expect(records[0].requestId).toBeUndefined();
    expect(records[1]).toMatchObject({ msg: "inside", service: "t", requestId: "req-1", n: 1 });
  });

  it("masks credentials in a logged URL", () => {
    expect(maskUrl("/content/v1/pages/home?key=pk_abc&lang=de")).toBe(
      "/content/v1/pages/home?key=***&lang=de",
    );
  });
});
