import { describe, expect, it } from "vitest";
import { type CommandIo, pathOf } from "./command_io.ts";

const io = (env: Record<string, string>): CommandIo => ({
  env,
  cwd: "/repo",
  stdout: { write: () => Promise.resolve() },
  stderr: { write: () => Promise.resolve() },
});

describe("pathOf", () => {
  it("reads a relative path from INIT_CWD, else from the run's folder", () => {
    expect(pathOf(io({ INIT_CWD: "/home/me" }), "site.json")).toBe("/home/me/site.json");
    expect(pathOf(io({}), "site.json")).toBe("/repo/site.json");
    expect(pathOf(io({ INIT_CWD: "" }), "a/b.json")).toBe("/repo/a/b.json");
  });

  it("keeps an absolute path", () => {
    expect(pathOf(io({ INIT_CWD: "/home/me" }), "/etc/site.json")).toBe("/etc/site.json");
  });
});
