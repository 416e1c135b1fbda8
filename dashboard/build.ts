/**
 * Builds dashboard/dist: dashboard.js (the page's script with uPlot, bundled
 * by Deno's bundler) and dashboard.css (uPlot's stylesheet and ours). The
 * gateway serves both from its own origin: nothing comes from a third-party
 * host. `deno task start`, `deno task test` and the image build run it.
 */
import { createRequire } from "node:module";
import { bundleForBrowser } from "../widget/build.ts";

export const DASHBOARD_SCRIPT = new URL("./dist/dashboard.js", import.meta.url);
export const DASHBOARD_STYLE = new URL("./dist/dashboard.css", import.meta.url);

export async function buildDashboard(): Promise<void> {
  await bundleForBrowser(new URL("./src/main.ts", import.meta.url), DASHBOARD_SCRIPT);
  const uplotCss = createRequire(import.meta.url).resolve("uplot/dist/uPlot.min.css");
  const css = (await Deno.readTextFile(uplotCss)) + "\n" +
    (await Deno.readTextFile(new URL("./src/style.css", import.meta.url)));
  await Deno.writeTextFile(DASHBOARD_STYLE, css);
}

if (import.meta.main) {
  await buildDashboard();
  const size = (await Deno.stat(DASHBOARD_SCRIPT)).size;
  console.log(`dashboard.js: ${size} bytes`);
}
