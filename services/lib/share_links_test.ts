import { describe, expect, it } from "vitest";
import {
  generateShareId,
  hashPassword,
  SHARE_ID,
  shareUrl,
  verifyPassword,
} from "./share_links.ts";

describe("share link ids", () => {
  it("are sh_ and 32 lowercase hex, different each time", () => {
    const a = generateShareId();
    const b = generateShareId();
    expect(a).toMatch(SHARE_ID);
    expect(b).toMatch(SHARE_ID);
    expect(a).not.toBe(b);
  });

  it("make the page's URL under PUBLIC_URL", () => {
    expect(shareUrl("https://stats.example/", "sh_" + "a".repeat(32)))
      .toBe("https://stats.example/share/sh_" + "a".repeat(32));
    expect(shareUrl("http://127.0.0.1:8080", "sh_1")).toBe("http://127.0.0.1:8080/share/sh_1");
  });
});

/** A cheap cost for the rules that do not depend on it. */
const CHEAP = { N: 1024, r: 8, p: 1 };

describe("share link passwords", () => {
  it("are stored as salted scrypt hashes naming their cost", async () => {
    const one = await hashPassword("open sesame");
    const two = await hashPassword("open sesame", CHEAP);
    expect(one).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(one).not.toContain("open sesame");
    expect(one.split("$")[4]).not.toBe(two.split("$")[4]);
    expect(await verifyPassword("open sesame", one)).toBe(true);
  });

  it("verify the right password only", async () => {
    const stored = await hashPassword("open sesame", CHEAP);
    expect(await verifyPassword("open sesame", stored)).toBe(true);
    expect(await verifyPassword("open sesame ", stored)).toBe(false);
    expect(await verifyPassword("", stored)).toBe(false);
  });

  it("verify with the cost the stored form names", async () => {
    const stored = await hashPassword("pw", CHEAP);
    const cheaper = stored.replace("scrypt$1024$", "scrypt$2048$");
    // The same salt and hash under another cost is another hash: no match.
    expect(await verifyPassword("pw", cheaper)).toBe(false);
  });

  it("match nothing against a stored form that cannot be read", async () => {
    expect(await verifyPassword("pw", "")).toBe(false);
    expect(await verifyPassword("pw", "sha256:abc")).toBe(false);
    expect(await verifyPassword("pw", "scrypt$1024$8$1$AAAA$AAAA")).toBe(false);
  });
});
