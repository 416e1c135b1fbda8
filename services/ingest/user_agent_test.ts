import { describe, expect, it } from "vitest";
import { describeAgent } from "./user_agent.ts";

const CHROME_WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const SAFARI_IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const IPAD =
  "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1";

describe("describeAgent", () => {
  it("reads device, browser and system", () => {
    expect(describeAgent(CHROME_WINDOWS)).toEqual({
      device: "desktop",
      browser: "Chrome",
      os: "Windows",
      bot: false,
    });
    expect(describeAgent(SAFARI_IPHONE)).toMatchObject({
      device: "mobile",
      browser: "Mobile Safari",
      os: "iOS",
    });
    expect(describeAgent(IPAD).device).toBe("tablet");
  });

  it("flags crawlers, tools and a missing user agent as bots", () => {
    expect(
      describeAgent("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)").bot,
    )
      .toBe(true);
    expect(describeAgent("curl/8.4.0").bot).toBe(true);
    expect(describeAgent("")).toEqual({ device: null, browser: null, os: null, bot: true });
  });

  it("answers the same for the same agent (cached)", () => {
    expect(describeAgent(CHROME_WINDOWS)).toBe(describeAgent(CHROME_WINDOWS));
  });
});
