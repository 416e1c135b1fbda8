import { describe, expect, it } from "vitest";
import { campaignOf, cleanQuery, cleanUrl, hasCampaign, isSensitiveParam } from "./url_clean.ts";

describe("cleanUrl", () => {
  it("never keeps a javascript:, data: or other non-http URL, nor a scheme-relative one", () => {
    for (
      const url of [
        "javascript:alert(document.cookie)",
        "  JavaScript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "file:///etc/passwd",
        "//evil.example/x?a=1",
      ]
    ) expect(cleanUrl(url), JSON.stringify(url)).toBeNull();
    expect(cleanUrl("/a?b=1")).toBe("/a?b=1");
    expect(cleanUrl("https://a.example/")).toBe("https://a.example/");
  });

  it("drops the fragment and every listed parameter, keeping the rest as sent", () => {
    expect(
      cleanUrl(
        "https://Shop.Example/p/a%20b?utm_source=x&token=1&q=caf%C3%A9&password=p&page=2#top",
      ),
    ).toBe("https://shop.example/p/a%20b?utm_source=x&q=caf%C3%A9&page=2");
  });

  it("removes every name of the list, any *_token, without regard to case", () => {
    const names = [
      "token",
      "access_token",
      "id_token",
      "refresh_token",
      "auth_token",
      "csrf_token",
      "auth",
      "password",
      "pass",
      "passwd",
      "pwd",
      "email",
      "e-mail",
      "mail",
      "key",
      "api_key",
      "apikey",
      "secret",
      "client_secret",
      "otp",
      "session",
      "sessionid",
      "jwt",
      "Email",
      "API_KEY",
    ];
    const query = names.map((n, i) => `${n}=${i}`).join("&");
    expect(cleanUrl(`https://a.example/?${query}&keep=1`)).toBe("https://a.example/?keep=1");
  });

  it("keeps code, UTM tags, click ids and dl", () => {
    const kept =
      "code=abc&utm_source=s&utm_medium=m&utm_campaign=c&utm_term=t&utm_content=n&gclid=1&gbraid=2&wbraid=3&yclid=4&fbclid=5&msclkid=6&dl=AbCdEfGhIj";
    expect(cleanUrl(`https://a.example/x?${kept}#frag`)).toBe(`https://a.example/x?${kept}`);
  });

  it("drops an encoded sensitive name and an empty query", () => {
    expect(cleanUrl("https://a.example/?%74oken=1")).toBe("https://a.example/");
    expect(cleanUrl("https://a.example/path?")).toBe("https://a.example/path");
    expect(cleanQuery("?a=1&&email=x@y")).toBe("a=1");
  });

  it("cleans relative URLs and keeps them relative; refuses nothing that parses", () => {
    expect(cleanUrl("/checkout?step=2&otp=123456#pay")).toBe("/checkout?step=2");
    expect(cleanUrl("")).toBeNull();
    // Only http, https and relative URLs are stored: an app referrer is classified, then dropped.
    expect(cleanUrl("android-app://com.google.android.gm/")).toBeNull();
  });

  it("tells sensitive names apart", () => {
    expect(isSensitiveParam("my_token")).toBe(true);
    expect(isSensitiveParam("tokens")).toBe(false);
    expect(isSensitiveParam("code")).toBe(false);
  });
});

describe("campaignOf", () => {
  it("reads UTM tags, click ids and a 10-character ad-link code", () => {
    const c = campaignOf(
      "https://a.example/?utm_source=news&utm_medium=email&utm_campaign=spring+sale&gclid=G1&fbclid=F1&dl=AbCdEfGhIj",
    );
    expect(c.utm).toEqual({
      utm_source: "news",
      utm_medium: "email",
      utm_campaign: "spring sale",
      utm_term: null,
      utm_content: null,
    });
    expect(c.clickIds).toEqual({ gclid: "G1", fbclid: "F1" });
    expect(c.adLink).toBe("AbCdEfGhIj");
    expect(hasCampaign(c)).toBe(true);
  });

  it("ignores an ad-link code of the wrong length and a missing URL", () => {
    expect(campaignOf("https://a.example/?dl=short").adLink).toBeNull();
    expect(campaignOf("https://a.example/?dl=ElevenChars").adLink).toBeNull();
    const none = campaignOf(null);
    expect(hasCampaign(none)).toBe(false);
  });
});
