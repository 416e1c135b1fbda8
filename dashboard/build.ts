/**
 * Builds dashboard/dist: dashboard.js (the page's Preact components with
 * @preact/signals and uPlot, bundled by Deno's bundler, esbuild inside, as
 * one minified script; the JSX settings are deno.json's compilerOptions) and
 * dashboard.css (uPlot's stylesheet and ours). The gateway serves both from
 * its own origin: nothing comes from a third-party host. `deno task start`,
 * `deno task test` and the image build run it; dashboard/size_test.ts holds
 * the script to its budget.
 */
import { createRequire } from "node:module";
import { bundleForBrowser, gzippedSize } from "../services/lib/browser_bundle.ts";

export const DASHBOARD_SCRIPT = new URL("./dist/dashboard.js", import.meta.url);
export const DASHBOARD_STYLE = new URL("./dist/dashboard.css", import.meta.url);

export async function buildDashboard(): Promise<void> {
  await bundleForBrowser(new URL("./src/main.tsx", import.meta.url), DASHBOARD_SCRIPT);
  const uplotCss = createRequire(import.meta.url).resolve("uplot/dist/uPlot.min.css");
  const css = (await Deno.readTextFile(uplotCss)) + "\n" +
    (await Deno.readTextFile(new URL("./src/style.css", import.meta.url)));
  await Deno.writeTextFile(DASHBOARD_STYLE, css);
}

if (import.meta.main) {
  await buildDashboard();
  const bytes = await Deno.readFile(DASHBOARD_SCRIPT);
  console.log(`dashboard.js: ${bytes.byteLength} bytes, ${await gzippedSize(bytes)} gzipped`);
}
