/**
 * Builds widget/dist/widget.js from widget/src with Deno's own bundler
 * (esbuild inside): one minified IIFE for the browser. `deno task widget`
 * runs it; start and test run it first, and so does the image build. The
 * gateway only serves the file, and refuses to start without it.
 */
import { bundleForBrowser, gzippedSize } from "../services/lib/browser_bundle.ts";

export const WIDGET_SOURCE = new URL("./src/main.ts", import.meta.url);
export const WIDGET_OUTPUT = new URL("./dist/widget.js", import.meta.url);

export function buildWidget(): Promise<Uint8Array> {
  return bundleForBrowser(WIDGET_SOURCE, WIDGET_OUTPUT);
}

if (import.meta.main) {
  const bytes = await buildWidget();
  console.log(`widget.js: ${bytes.byteLength} bytes, ${await gzippedSize(bytes)} gzipped`);
}
