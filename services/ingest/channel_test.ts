import { describe, expect, it } from "vitest";
import { classifyChannel } from "./channel.ts";
import { bundledReferrers, ReferrerList } from "./referrers.ts";
import { campaignOf } from "./url_clean.ts";

const list = bundledReferrers();
const page = "https://shop.example/landing";

function channel(query: string, referrer: string | null = null) {
  const pageUrl = `${page}${query}`;
  return classifyChannel({ campaign: campaignOf(pageUrl), referrer, pageUrl }, list);
}

describe("the maintained referrer list", () => {
  it("loads from its package and knows the big referrers", () => {
    expect(list.size).toBeGreaterThan(1000);
    expect(list.lookup("www.google.com")?.medium).toBe("search");
    expect(list.lookup("news.google.de", "/")?.medium).toBe("search");
    expect(list.lookup("www.bing.com")?.medium).toBe("search");
    expect(list.lookup("l.facebook.com")?.medium).toBe("social");
    expect(list.lookup("mail.google.com")?.medium).toBe("email");
    expect(list.lookup("unknown-blog.example")).toBeUndefined();
  });

  it("matches path prefixes and parent domains, never a bare top-level domain", () => {
    const small = new ReferrerList({
      "orange.fr/webmail": { source: "Orange Webmail", medium: "email" },
      "uk": { source: "nonsense", medium: "search" },
      "example.co.uk": { source: "Example", medium: "social" },
    });
    expect(small.lookup("orange.fr", "/webmail/inbox")?.medium).toBe("email");
    expect(small.lookup("orange.fr", "/news")).toBeUndefined();
    expect(small.lookup("a.b.example.co.uk")?.source).toBe("Example");
    expect(small.lookup("other.uk")).toBeUndefined();
    expect(small.lookup("other.co.uk")).toBeUndefined();
    expect(small.mediumOfSource("orange webmail")).toBe("email");
  });
});

describe("classifyChannel", () => {
  it("paid: ad click ids, paid media, ad servers, a tagged ad link", () => {
    expect(channel("?gclid=abc", "https://www.google.com/")).toBe("paid");
    for (const id of ["gbraid", "wbraid", "msclkid", "yclid"]) {
      expect(channel(`?${id}=1`)).toBe("paid");
    }
    for (const m of ["cpc", "PPC", "paid_social", "paidsearch", "display", "cpm", "retargeting"]) {
      expect(channel(`?utm_source=x&utm_medium=${m}`)).toBe("paid");
    }
    expect(channel("?dl=AbCdEfGhIj")).toBe("paid");
    expect(channel("", "https://www.googleadservices.com/pagead/aclk")).toBe("paid");
  });

  it("email: email media and sources, webmail referrers", () => {
    expect(channel("?utm_source=spring&utm_medium=email")).toBe("email");
    expect(channel("?utm_source=newsletter")).toBe("email");
    expect(channel("?dl=AbCdEfGhIj&utm_medium=newsletter")).toBe("email");
    expect(channel("", "https://mail.google.com/mail/u/0/")).toBe("email");
    expect(channel("", "android-app://com.google.android.gm/")).toBe("email");
  });

  it("social: social media, fbclid, social sources and referrers", () => {
    expect(channel("?utm_medium=social&utm_source=x")).toBe("social");
    expect(channel("?fbclid=IwAR")).toBe("social");
    expect(channel("?utm_source=facebook")).toBe("social");
    expect(channel("", "https://t.co/abc")).toBe("social");
    expect(channel("", "https://www.linkedin.com/feed/")).toBe("social");
  });

  it("organic: search engine referrers and the organic medium", () => {
    expect(channel("", "https://www.google.de/")).toBe("organic");
    expect(channel("", "https://duckduckgo.com/")).toBe("organic");
    expect(channel("?utm_medium=organic&utm_source=x")).toBe("organic");
  });

  it("referral: other sites and tagged sources with no known medium", () => {
    expect(channel("", "https://blog.example.org/post")).toBe("referral");
    expect(channel("?utm_source=partner-site")).toBe("referral");
    expect(channel("?utm_medium=affiliate&utm_source=a")).toBe("referral");
  });

  it("direct: no referrer, or the site's own pages", () => {
    expect(channel("")).toBe("direct");
    expect(channel("", "")).toBe("direct");
    expect(channel("", "https://www.shop.example/other")).toBe("direct");
    expect(channel("", "not a url")).toBe("direct");
  });
});
