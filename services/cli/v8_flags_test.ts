import { describe, expect, it } from "vitest";
import { V8_FLAGS_ARG } from "./v8_flags.ts";

const ROOT = new URL("../../", import.meta.url);

describe("V8 flags", () => {
  it("are passed by every command that starts a service process", () => {
    const tasks = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).tasks;
    const startsServices = [
      tasks.start.split("&&").find((step: string) => step.includes("services/cli/start.ts")),
      tasks.service,
    ];
    for (const command of startsServices) {
      expect(command.split(/\s+/)).toContain(V8_FLAGS_ARG);
    }
    const entrypoint = Deno.readTextFileSync(new URL("deploy/Containerfile", ROOT))
      .split("\n").find((line) => line.startsWith("ENTRYPOINT"));
    expect(JSON.parse(entrypoint!.slice("ENTRYPOINT".length))).toContain(V8_FLAGS_ARG);
  });
});
