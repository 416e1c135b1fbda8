import { describe, expect, it } from "vitest";
import { matchRoute, route } from "./match.ts";

const table = [
  route("/content/v1/pages/:marker", "page"),
  route("/content/v1/blog", "blog"),
  route("/content/v1/blog/:slug", "post"),
];

describe("matchRoute", () => {
  it("matches literals and captures decoded parameters", () => {
    expect(matchRoute(table, "/content/v1/pages/home")).toMatchObject({
      route: { target: "page" },
      params: { marker: "home" },
    });
    expect(matchRoute(table, "/content/v1/pages/h%C3%A9")?.params.marker).toBe("hé");
    expect(matchRoute(table, "/content/v1/blog")?.route.target).toBe("blog");
    expect(matchRoute(table, "/content/v1/blog/hello-world")?.params.slug).toBe("hello-world");
  });

  it("tolerates one trailing slash", () => {
    expect(matchRoute(table, "/content/v1/pages/home/")?.route.target).toBe("page");
  });

  it("refuses singular names, a missing version, extra or empty segments", () => {
    for (
      const path of [
        "/content/v1/page/home",
        "/content/pages/home",
        "/content/v1/pages/home/hero",
        "/content/v1/pages/",
        "/content/v1/pages//",
        "/content/V1/pages/home",
      ]
    ) {
      expect(matchRoute(table, path)).toBeUndefined();
    }
  });

  it("keeps a malformed escape as it is", () => {
    expect(matchRoute(table, "/content/v1/pages/%E0%A4%A")?.params.marker).toBe("%E0%A4%A");
  });
});

describe("a rest segment", () => {
  const rest = [route("/demo/*", "demo")];
  it("matches the path itself and anything under it", () => {
    for (const path of ["/demo", "/demo/", "/demo/a", "/demo/a/b/"]) {
      expect(matchRoute(rest, path)?.route.target, path).toBe("demo");
    }
    expect(matchRoute(rest, "/demos")).toBeUndefined();
    expect(matchRoute(rest, "/")).toBeUndefined();
  });
});
