import { describe, expect, it } from "vitest";
import { userPath } from "./user_path.ts";

describe("userPath", () => {
  it("reads a relative path from where the user ran deno task", () => {
    expect(userPath("site.json", "/home/me/sites")).toBe("/home/me/sites/site.json");
    expect(userPath("../site.json", "/home/me/sites")).toBe("/home/me/site.json");
  });

  it("leaves absolute paths, and paths outside deno task, alone", () => {
    expect(userPath("/tmp/site.json", "/home/me")).toBe("/tmp/site.json");
    expect(userPath("site.json", undefined)).toBe("site.json");
    expect(userPath("site.json", "")).toBe("site.json");
  });
});
