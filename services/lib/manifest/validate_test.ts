import { describe, expect, it } from "vitest";
import { ManifestError, parseManifest, validateManifest } from "./validate.ts";

const example = JSON.parse(
  Deno.readTextFileSync(new URL("../../../test/fixtures/contract-example.json", import.meta.url)),
);
const clone = () => structuredClone(example);

function faultOf(mutate: (m: ReturnType<typeof clone>) => void): { path: string; problem: string } {
  const m = clone();
  mutate(m);
  try {
    validateManifest(m);
  } catch (error) {
    if (error instanceof ManifestError) return { path: error.path, problem: error.problem };
    throw error;
  }
  throw new Error("manifest was accepted");
}

describe("site.embedOrigins", () => {
  it("takes up to 10 https origins, lowercased", () => {
    const m = clone();
    m.site.embedOrigins = ["https://Intranet.Example", "https://b.example:8443/"];
    expect(validateManifest(m).site.embedOrigins).toEqual([
      "https://intranet.example",
      "https://b.example:8443",
    ]);
  });

  it("refuses http, paths, more than 10 and repeats, naming the path", () => {
    expect(faultOf((m) => (m.site.embedOrigins = ["http://a.example"])).path)
      .toBe("$.site.embedOrigins[0]");
    expect(faultOf((m) => (m.site.embedOrigins = ["https://a.example", "https://a.example/x"])))
      .toMatchObject({ path: "$.site.embedOrigins[1]" });
    expect(faultOf((m) => (m.site.embedOrigins = ["a.example"])).path)
      .toBe("$.site.embedOrigins[0]");
    const many = Array.from({ length: 11 }, (_, i) => `https://s${i}.example`);
    expect(faultOf((m) => (m.site.embedOrigins = many)).path).toBe("$.site.embedOrigins");
    expect(faultOf((m) => (m.site.embedOrigins = ["https://a.example", "https://A.example"])).path)
      .toBe("$.site.embedOrigins[1]");
    expect(faultOf((m) => (m.site.embedOrigins = "https://a.example")).path)
      .toBe("$.site.embedOrigins");
  });
});

describe("validateManifest", () => {
  it("accepts the contract example and fills defaults", () => {
    const m = validateManifest(clone());
    expect(m.site.id).toBe("demo");
    expect(m.pages[0].sections[0].blocks.map((b) => b.marker)).toEqual([
      "title",
      "cover",
      "cta",
      "card",
      "items",
    ]);
    expect(m.posts[0].publishedAt).toBe("2026-01-10T09:00:00.000Z");
    expect(m.eventTypes[0].params).toHaveLength(2);
    const minimal = validateManifest({ site: { id: "shop", languages: ["en"] } });
    expect(minimal.site).toEqual({
      id: "shop",
      name: "shop",
      timeZone: null,
      languages: ["en"],
      domains: [],
      embedOrigins: [],
      fallbacks: {},
    });
    expect(minimal.blog).toEqual({ pageSize: 12, order: "publishedAt:desc", scheduling: true });
    expect(minimal.reportKeys).toEqual([]);
    expect(minimal.previewKeys).toEqual([]);
    const unzoned = validateManifest({ site: { id: "shop", languages: ["en"], timeZone: null } });
    expect(unzoned.site.timeZone).toBeNull();
    const zoned = validateManifest({
      site: { id: "shop", languages: ["en"], timeZone: "Asia/Kathmandu" },
    });
    expect(zoned.site.timeZone).toBe("Asia/Kathmandu");
    expect(minimal.pages).toEqual([]);
  });

  it("names the JSON path of the first fault", () => {
    expect(faultOf((m) => (m.site.id = "Demo_1")).path).toBe("$.site.id");
    expect(faultOf((m) => (m.site.languages = ["en", "EN"])).path).toBe("$.site.languages[1]");
    expect(faultOf((m) => (m.site.languages = [])).path).toBe("$.site.languages");
    expect(faultOf((m) => (m.site.timeZone = "Mars/Olympus")).path).toBe("$.site.timeZone");
    expect(faultOf((m) => (m.site.timeZone = "+05:00")).path).toBe("$.site.timeZone");
    expect(faultOf((m) => (m.site.timeZone = 7)).path).toBe("$.site.timeZone");
    expect(faultOf((m) => (m.site.domains = ["https://demo.example"])).path).toBe(
      "$.site.domains[0]",
    );
    expect(faultOf((m) => (m.siteKeys = ["pk_123"])).path).toBe("$.siteKeys[0]");
    expect(faultOf((m) => (m.secretKeys = ["sk_" + "a".repeat(47)])).path).toBe("$.secretKeys[0]");
    expect(faultOf((m) => (m.reportKeys = ["rk_" + "A".repeat(48)])).path).toBe("$.reportKeys[0]");
    expect(faultOf((m) => (m.site.fallbacks = { de: "en", en: "de" })).path)
      .toMatch(/^\$\.site\.fallbacks\.(de|en)$/);
    expect(faultOf((m) => (m.site.fallbacks = { de: "xx" })).path).toBe("$.site.fallbacks.de");
    expect(faultOf((m) => (m.site.fallbacks = { xx: "en" })).path).toBe("$.site.fallbacks.xx");
    expect(faultOf((m) => (m.previewKeys = ["pk_" + "a".repeat(32)])).path)
      .toBe("$.previewKeys[0]");
    expect(faultOf((m) => (m.previewKeys = ["pv_" + "a".repeat(31)])).path)
      .toBe("$.previewKeys[0]");
    expect(faultOf((m) => (m.reportKeys = [m.secretKeys[0]])).path).toBe("$.reportKeys[0]");
    expect(faultOf((m) => (m.blog.pageSize = 51)).path).toBe("$.blog.pageSize");
    expect(faultOf((m) => (m.blog.order = "title:asc")).path).toBe("$.blog.order");
    expect(faultOf((m) => (m.pages[0].marker = "home-page")).path).toBe("$.pages[0].marker");
    expect(faultOf((m) => (m.pages[0].sections[0].blocks[1].type = "gallery")).path).toBe(
      "$.pages[0].sections[0].blocks[1].type",
    );
    expect(
      faultOf((m) => m.pages[0].sections[0].blocks.push({ marker: "title", type: "text" })).problem,
    ).toMatch(
      /duplicate block marker/,
    );
    expect(faultOf((m) => m.sections.push({ marker: "hero", blocks: [] })).path).toBe(
      "$.sections[1].marker",
    );
    expect(faultOf((m) => (m.pages[0].sections[0].blocks[0].content = { en: 5 })).path).toBe(
      "$.pages[0].sections[0].blocks[0].content.en",
    );
    expect(faultOf((m) => (m.posts[0].slug = "Hello World")).path).toBe("$.posts[0].slug");
    expect(faultOf((m) => (m.posts[0].publishedAt = "yesterday")).path).toBe(
      "$.posts[0].publishedAt",
    );
    expect(faultOf((m) => (m.posts[0].status = "scheduled")).path).toBe("$.posts[0].status");
    expect(faultOf((m) => (m.eventTypes[0].name = "1signup")).path).toBe("$.eventTypes[0].name");
    expect(faultOf((m) => (m.eventTypes[0].currency = "EURO-1")).path).toBe(
      "$.eventTypes[0].currency",
    );
    expect(faultOf((m) => (m.eventTypes[0].params[0].type = "date")).path).toBe(
      "$.eventTypes[0].params[0].type",
    );
  });

  it("refuses a URL that is not http, https or a relative path, wherever a URL is stored", () => {
    const rule = "must be an http or https URL or a relative path";
    const hero = "$.pages[0].sections[0].blocks";
    for (
      const bad of [
        "javascript:alert(1)",
        " JaVa\tScRiPt:alert(1)",
        "data:text/html,x",
        "//evil.example/",
      ]
    ) {
      expect(faultOf((m) => (m.pages[0].sections[0].blocks[2].content.url = bad))).toEqual({
        path: `${hero}[2].content.url`,
        problem: rule,
      });
      expect(faultOf((m) => (m.pages[0].sections[0].blocks[1].content.file = bad)).path).toBe(
        `${hero}[1].content.file`,
      );
      expect(faultOf((m) => (m.pages[0].sections[0].blocks[3].content.photo.file = bad)).path)
        .toBe(`${hero}[3].content.photo.file`);
      expect(faultOf((m) => (m.posts[0].image = bad)).path).toBe("$.posts[0].image");
      expect(faultOf((m) => (m.posts[0].image = { en: "/a.png", de: bad })).path).toBe(
        "$.posts[0].image.de",
      );
      expect(
        faultOf((m) => {
          m.pages[0].sections[0].blocks[1].multilang = true;
          m.pages[0].sections[0].blocks[1].content = { en: bad };
        }).path,
      ).toBe(`${hero}[1].content.en`);
    }
    // http, https and paths stay accepted.
    const ok = clone();
    ok.pages[0].sections[0].blocks[2].content.url = "https://shop.example/buy?x=1";
    ok.posts[0].image = "/img/cover.png";
    expect(() => validateManifest(ok)).not.toThrow();
  });

  it("enforces the counted limits", () => {
    const sixKeys = Array.from({ length: 6 }, (_, i) => "sk_" + String(i).repeat(48));
    expect(faultOf((m) => (m.secretKeys = sixKeys)).path).toBe("$.secretKeys");
    const params = Array.from({ length: 21 }, (_, i) => ({ key: `p${i}`, type: "string" }));
    expect(faultOf((m) => (m.eventTypes[0].params = params)).path).toBe("$.eventTypes[0].params");
    const types = Array.from({ length: 101 }, (_, i) => ({ name: `e${i}` }));
    expect(faultOf((m) => (m.eventTypes = types)).path).toBe("$.eventTypes");
    // Archived types do not count against the 100 active ones.
    const m = clone();
    m.eventTypes = [...types.slice(0, 100), { name: "old", status: "archived" }];
    expect(validateManifest(m).eventTypes).toHaveLength(101);
  });

  it("refuses text that is not JSON", () => {
    expect(() => parseManifest("{ nope")).toThrow(ManifestError);
  });
  it("reports the fault that comes first in the file when there are several", () => {
    expect(
      faultOf((m) => {
        m.site.name = 5;
        m.site.timeZone = "Mars/Olympus";
      }).path,
    ).toBe("$.site.name");
    expect(
      faultOf((m) => {
        m.pages.push({ ...structuredClone(m.pages[0]), sections: [] });
        m.pages.push({ marker: "x!", sections: [] });
      }).path,
    ).toBe("$.pages[1].marker");
    expect(
      faultOf((m) => {
        m.sections = [{ marker: m.pages[0].sections[0].marker, blocks: [] }];
        m.posts[0].slug = "Not A Slug";
      }).path,
    ).toBe("$.sections[0].marker");
  });
});

describe("webhooks", () => {
  const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  /** The contract's example webhook. */
  const hook = () => ({
    url: "https://hooks.example/crm",
    events: ["content.published", "post.published", "lead.created"],
    secret: SECRET,
  });
  const withHooks = (list: unknown, options = {}) =>
    validateManifest({ ...clone(), webhooks: list }, options);
  const faultIn = (list: unknown, options = {}) => {
    try {
      withHooks(list, options);
    } catch (error) {
      if (error instanceof ManifestError) return `${error.path}: ${error.problem}`;
      throw error;
    }
    throw new Error("manifest was accepted");
  };

  it("are optional, and kept as written", () => {
    expect(validateManifest(clone()).webhooks).toEqual([]);
    expect(withHooks([hook()]).webhooks).toEqual([hook()]);
  });

  it("are at most 5, each URL once", () => {
    const five = [1, 2, 3, 4, 5].map((i) => ({ ...hook(), url: `https://hooks.example/${i}` }));
    expect(withHooks(five).webhooks).toHaveLength(5);
    expect(faultIn([...five, { ...hook(), url: "https://hooks.example/6" }]))
      .toBe("$.webhooks: a site has at most 5 webhooks");
    expect(faultIn([hook(), { ...hook(), events: ["lead.created"] }]))
      .toBe('$.webhooks[1].url: duplicate webhook URL "https://hooks.example/crm"');
  });

  it("take https URLs, and http only when WEBHOOK_ALLOW_INSECURE=1 says so", () => {
    const http = { ...hook(), url: "http://127.0.0.1:8099/hook" };
    expect(faultIn([hook(), http])).toBe(
      "$.webhooks[1].url: must be an https URL (http only while WEBHOOK_ALLOW_INSECURE=1)",
    );
    expect(withHooks([http], { allowInsecureWebhooks: true }).webhooks[0].url)
      .toBe(http.url);
    for (const url of ["ftp://hooks.example/x", "/relative", "hooks.example", "", 7]) {
      expect(faultIn([{ ...hook(), url }], { allowInsecureWebhooks: true }))
        .toMatch(/^\$\.webhooks\[0\]\.url: must be/);
    }
    expect(faultIn([{ ...hook(), url: "https://user:pw@hooks.example/x" }]))
      .toBe("$.webhooks[0].url: must not carry a user name or password");
  });

  it("name a non-empty list of known types, each once", () => {
    expect(faultIn([{ ...hook(), events: [] }])).toBe(
      "$.webhooks[0].events: must be a non-empty array",
    );
    expect(faultIn([{ ...hook(), events: "lead.created" }]))
      .toBe("$.webhooks[0].events: must be a non-empty array");
    expect(faultIn([{ ...hook(), events: ["lead.created", "lead.deleted"] }]))
      .toBe(
        "$.webhooks[0].events[1]: must be one of content.published, post.published, lead.created, traffic.spike, traffic.drop",
      );
    expect(faultIn([{ ...hook(), events: ["lead.created", "lead.created"] }]))
      .toBe('$.webhooks[0].events[1]: duplicate webhook type "lead.created"');
  });

  it("need a whsec_ secret of 24 to 64 bytes, and never quote it", () => {
    const short = "whsec_" + btoa("x".repeat(23));
    for (
      const secret of [short, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!", undefined]
    ) {
      const fault = faultIn([{ ...hook(), secret }]);
      expect(fault).toMatch(/^\$\.webhooks\[0\]\.secret: must be/);
      if (secret) expect(fault).not.toContain(secret);
    }
    expect(withHooks([{ ...hook(), secret: "whsec_" + btoa("y".repeat(64)) }]).webhooks)
      .toHaveLength(1);
  });
});

describe("notifications", () => {
  const withNotifications = (notifications: unknown) =>
    validateManifest({ ...clone(), notifications });

  it("are none when absent, and read as the contract writes them", () => {
    expect(validateManifest(clone()).notifications).toEqual({
      emailReports: [],
      trafficAlerts: [],
    });
    const given = {
      emailReports: [{ to: "owner@demo.example", every: "week" }],
      trafficAlerts: [
        { to: "owner@demo.example", kind: "spike", threshold: 50 },
        { to: "owner@demo.example", kind: "drop", threshold: 5 },
      ],
    };
    expect(withNotifications(given).notifications).toEqual(given);
    expect(withNotifications({ trafficAlerts: [] }).notifications.emailReports).toEqual([]);
  });

  it("refuse a fault with its path: address, period, kind, threshold, count, repeats", () => {
    const report = (r: unknown) => faultOf((m) => (m.notifications = { emailReports: [r] }));
    const alert = (a: unknown) => faultOf((m) => (m.notifications = { trafficAlerts: [a] }));
    expect(report({ to: "owner", every: "week" }).path).toBe("$.notifications.emailReports[0].to");
    expect(report({ to: "a@b.example, c@d.example", every: "week" }).problem).toBe(
      "must be one email address",
    );
    expect(report({ to: "a@b.example", every: "day" }).path).toBe(
      "$.notifications.emailReports[0].every",
    );
    expect(alert({ to: "a@b.example", kind: "peak", threshold: 1 }).path).toBe(
      "$.notifications.trafficAlerts[0].kind",
    );
    for (const threshold of [0, -3, 2.5, "5", null]) {
      expect(alert({ to: "a@b.example", kind: "drop", threshold })).toEqual({
        path: "$.notifications.trafficAlerts[0].threshold",
        problem: "must be a positive integer",
      });
    }
    const eleven = Array.from({ length: 11 }, (_, i) => ({ to: `o${i}@a.example`, every: "week" }));
    expect(faultOf((m) => (m.notifications = { emailReports: eleven }))).toEqual({
      path: "$.notifications.emailReports",
      problem: "must hold at most 10 items",
    });
    const twice = { to: "a@b.example", every: "month" };
    expect(faultOf((m) => (m.notifications = { emailReports: [twice, twice] })).path).toBe(
      "$.notifications.emailReports[1]",
    );
    expect(faultOf((m) => (m.notifications = [])).path).toBe("$.notifications");
  });

  it("name traffic.spike and traffic.drop as webhook types", () => {
    const hook = {
      url: "https://hooks.example/crm",
      events: ["traffic.spike", "traffic.drop"],
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    };
    expect(validateManifest({ ...clone(), webhooks: [hook] }).webhooks[0].events).toEqual([
      "traffic.spike",
      "traffic.drop",
    ]);
  });
});
