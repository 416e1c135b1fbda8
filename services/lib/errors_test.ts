import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { ErrorDetailSchema } from "./gen/crm/common/v1/error_pb.ts";
import {
  Code,
  describeError,
  fieldProblem,
  limit,
  manifestProblem,
  publicError,
  publicFields,
  reasonOf,
  siteNotFound,
} from "./errors.ts";

describe("typed error details", () => {
  it("give the public fields of each case in their declared order", () => {
    const fields = (f: Parameters<typeof publicError>[2]) =>
      publicFields(create(ErrorDetailSchema, { reason: "r", fields: f }));
    expect(fields(fieldProblem("p", "must be an object"))).toEqual({
      field: "p",
      problem: "must be an object",
    });
    expect(Object.keys(fields(manifestProblem("$.site.id", "x")))).toEqual(["path", "problem"]);
    expect(fields(limit(50))).toEqual({ max: 50 });
    expect(fields(siteNotFound("demo"))).toEqual({ siteId: "demo" });
    expect(fields({ case: "invalidLanguage", value: { lang: "EN" } })).toEqual({ lang: "EN" });
    expect(JSON.stringify(fields({
      case: "unknownLanguages",
      value: { lang: "fr,en", unknown: ["fr"], available: [] },
    }))).toBe('{"lang":"fr,en","unknown":["fr"],"available":[]}');
    expect(fields({ case: "unknownEvent", value: { name: "nope" } })).toEqual({ name: "nope" });
    expect(fields(undefined)).toEqual({});
  });

  it("travel inside a Connect error and read back with their code", () => {
    const error = publicError(Code.NotFound, "site_not_found", siteNotFound("x"));
    const reason = reasonOf(error);
    expect(reason).toMatchObject({ code: Code.NotFound, reason: "site_not_found" });
    expect(reason?.fields).toEqual({ siteId: "x" });
    expect(describeError(error)).toBe('site_not_found {"siteId":"x"}');
    expect(describeError(publicError(Code.Unauthenticated, "invalid_key"))).toBe("invalid_key");
    expect(reasonOf(new Error("plain"))).toBeUndefined();
  });
});
