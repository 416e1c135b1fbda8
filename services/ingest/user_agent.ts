/**
 * Device, browser and operating system from the User-Agent header
 * (ua-parser-js 1.x, MIT; 2.x changed to AGPL-3.0), and a bot flag from
 * isbot's maintained pattern list. A missing user agent counts as a bot:
 * every browser sends one. Answers are cached, since a few thousand user
 * agents make up nearly all traffic and parsing costs about 12 µs.
 */
import UAParser from "ua-parser-js";
import { isbot } from "isbot";
import { boundedMemo } from "../lib/memo.ts";

export interface Agent {
  /** desktop, mobile, tablet, smarttv, console, wearable, embedded; null when unknown. */
  device: string | null;
  browser: string | null;
  os: string | null;
  bot: boolean;
}

const MAX_CACHED = 10_000;
const MAX_UA = 512;

function parse(ua: string): Agent {
  if (ua.trim() === "") return { device: null, browser: null, os: null, bot: true };
  const result = new UAParser(ua).getResult();
  const known = Boolean(result.browser.name || result.os.name);
  return {
    device: result.device.type ?? (known ? "desktop" : null),
    browser: result.browser.name ?? null,
    os: result.os.name ?? null,
    bot: isbot(ua),
  };
}

const parseRemembered = boundedMemo(parse, { maxEntries: MAX_CACHED });

export function describeAgent(userAgent: string): Agent {
  return parseRemembered(userAgent.slice(0, MAX_UA));
}
