import { describe, expect, it } from "vitest";
import { ingestSitePart } from "./admin_handlers.ts";
import type { IngestStore } from "./storage.ts";
import { validateManifest } from "../lib/manifest/validate.ts";
import { reasonOf } from "../lib/errors.ts";
import type { Bus } from "../lib/bus.ts";
import { systemClock } from "../lib/clock.ts";

const manifest = (segments: unknown) =>
  validateManifest({
    site: { id: "shop", languages: ["en"] },
    eventTypes: [{ name: "signup", params: [{ key: "plan", type: "string" }] }],
    segments,
  });

/** The dry run's refusal of a manifest, as path and problem; "accepted" when there is none. */
async function refusal(segments: unknown): Promise<string> {
  const part = ingestSitePart({} as IngestStore, {} as Bus, systemClock);
  try {
    await part.check!(manifest(segments));
  } catch (error) {
    const reason = reasonOf(error);
    expect(reason?.reason).toBe("invalid_manifest");
    return String(reason?.fields.path);
  }
  return "accepted";
}

describe("a manifest's segments, judged by the query's rules", () => {
  it("accepts filters on visit: and event: dimensions and declared properties", async () => {
    expect(
      await refusal([{
        name: "Pro signups",
        filters: [["is", "event:name", ["signup"]], ["is", "event:props:plan", ["pro"]]],
      }]),
    ).toBe("accepted");
  });

  it("refuses a broken filter with its path in the manifest", async () => {
    const ok = { name: "ok", filters: [["is", "visit:country", ["DE"]]] };
    expect(await refusal([ok, { name: "x", filters: [["is", "time:day", ["2026-01-01"]]] }]))
      .toBe("$.segments[1].filters[0]");
    expect(await refusal([{ name: "x", filters: [["is", "event:props:seats", ["1"]]] }]))
      .toBe("$.segments[0].filters[0]");
    expect(await refusal([{ name: "x", filters: [["maybe", "visit:country", ["DE"]]] }]))
      .toBe("$.segments[0].filters[0]");
  });
});
