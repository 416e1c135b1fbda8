/// <reference lib="dom" />
/**
 * The dashboard in Chromium for the browser tests: signing in, waiting until
 * every load of a view has answered, reading cards, lists and tables off the
 * page, and running axe-core (npm) in the page.
 */
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE_SOURCE = Deno.readTextFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
);

/**
 * Waits until the page has asked for everything the view needs and every
 * answer is drawn: #app not aria-busy for 400 ms on end (a load that starts
 * from another's answer starts well within that).
 */
export async function settled(page: Page): Promise<void> {
  const token = crypto.randomUUID();
  await page.waitForFunction(
    (token) => {
      // deno-lint-ignore no-explicit-any
      const w = globalThis as any;
      const app = document.getElementById("app");
      if (w.__settleToken !== token || !app || app.getAttribute("aria-busy") !== "false") {
        w.__settleToken = token;
        w.__quietSince = performance.now();
        return false;
      }
      return performance.now() - w.__quietSince > 400;
    },
    token,
    { polling: 50, timeout: 90_000 },
  );
}

export async function signIn(page: Page, base: string, key: string, search = ""): Promise<void> {
  await page.goto(`${base}/dashboard/${search}`);
  await page.fill("#key", key);
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector('[data-testid="cards"]');
  await settled(page);
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's violations on the page as it is now (run through the debugger, so the CSP holds). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${AXE_SOURCE}\n;0`);
  return await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    // deno-lint-ignore no-explicit-any
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      // deno-lint-ignore no-explicit-any
      nodes: v.nodes.slice(0, 3).map((n: any) => ({ target: n.target })),
    }));
  });
}

/** The serious and critical ones, which no view may have. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((v) =>
    v.impact === "serious" || v.impact === "critical"
  );
}

/** A card's shown value and change (null without one). */
export async function card(
  page: Page,
  metric: string,
): Promise<{ value: string[]; change: string[]; tone: string[] }> {
  const root = page.locator(`[data-testid="cards"] [data-metric="${metric}"]`);
  const change = root.locator('[data-testid="change"]');
  return {
    value: (await root.locator('[data-testid="value"]').allTextContents()).map((t) => t.trim()),
    // The visible text, without the words for screen readers.
    change: await change.evaluateAll((nodes) =>
      nodes.map((n) => (n.firstChild?.textContent ?? "").trim())
    ),
    tone: await change.evaluateAll((nodes) =>
      nodes.map((n) => n.className.replace("change", "").trim())
    ),
  };
}

/** A list's rows: the raw value (data-value) and each cell's text. */
export async function listRows(
  page: Page,
  selector: string,
): Promise<{ value: string; label: string; cells: string[] }[]> {
  return await page.locator(`${selector} tbody tr`).evaluateAll((rows) =>
    rows.map((row) => ({
      value: row.getAttribute("data-value") ?? "",
      label: (row.querySelector("th")?.textContent ?? "").trim(),
      cells: [...row.querySelectorAll("td")].map((td) => (td.textContent ?? "").trim()),
    }))
  );
}
