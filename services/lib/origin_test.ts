import { describe, expect, it } from "vitest";
import { hostOfOrigin } from "./origin.ts";

describe("hostOfOrigin", () => {
  it("drops scheme, port and a leading www.", () => {
    expect(hostOfOrigin("https://www.demo.example:8443")).toBe("demo.example");
    expect(hostOfOrigin("http://demo.example")).toBe("demo.example");
    expect(hostOfOrigin("http://localhost:8080")).toBe("localhost");
  });

  it("ignores case", () => {
    expect(hostOfOrigin("https://WWW.Demo.Example")).toBe("demo.example");
  });

  it("keeps other subdomains", () => {
    expect(hostOfOrigin("https://shop.demo.example")).toBe("shop.demo.example");
    expect(hostOfOrigin("https://wwwdemo.example")).toBe("wwwdemo.example");
  });

  it("refuses null, opaque and malformed origins", () => {
    expect(hostOfOrigin("null")).toBeUndefined();
    expect(hostOfOrigin("")).toBeUndefined();
    expect(hostOfOrigin("file:///tmp/x.html")).toBeUndefined();
    expect(hostOfOrigin("not a url")).toBeUndefined();
  });
});
