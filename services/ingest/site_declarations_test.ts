import { describe, expect, it } from "vitest";
import { Code, reasonOf } from "../lib/errors.ts";
import type { EventTypeDef } from "../lib/manifest/types.ts";
import { siteAnswer, type SiteDeclarations } from "./site_declarations.ts";

const SIGNUP: EventTypeDef = {
  name: "signup",
  title: "Sign up",
  description: "not for readers of reports",
  status: "active",
  params: [{ key: "plan", type: "string" }, { key: "seats", type: "number" }],
  bringsRevenue: true,
  currency: "EUR",
};

function store(zone: string | null | undefined, types: EventTypeDef[]): SiteDeclarations {
  return {
    siteTimeZone: () => Promise.resolve(zone),
    eventTypes: () => Promise.resolve(types),
  };
}

describe("the site's declarations", () => {
  it("holds the zone and each type's name, title, status, parameters and revenue", async () => {
    const answer = await siteAnswer(store("Europe/Berlin", [SIGNUP]), "demo");
    expect(answer.siteId).toBe("demo");
    expect(answer.timeZone).toBe("Europe/Berlin");
    expect(answer.eventTypes).toHaveLength(1);
    const [type] = answer.eventTypes;
    expect([type.name, type.title, type.status, type.bringsRevenue, type.currency]).toEqual([
      "signup",
      "Sign up",
      "active",
      true,
      "EUR",
    ]);
    expect(type.params.map((p) => [p.key, p.type])).toEqual([["plan", "string"], [
      "seats",
      "number",
    ]]);
  });

  it("leaves the zone and a revenue-less type's currency unset", async () => {
    const archived: EventTypeDef = {
      ...SIGNUP,
      status: "archived",
      bringsRevenue: false,
      currency: null,
    };
    const answer = await siteAnswer(store(null, [archived]), "demo");
    expect(answer.timeZone).toBeUndefined();
    expect(answer.eventTypes[0].currency).toBeUndefined();
    expect(answer.eventTypes[0].status).toBe("archived");
  });

  it("refuses an unknown site", async () => {
    const refusal = await siteAnswer(store(undefined, []), "nope").then(() => undefined, reasonOf);
    expect(refusal?.reason).toBe("site_not_found");
    expect(refusal?.code).toBe(Code.NotFound);
  });
});
