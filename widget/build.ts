/**
 * Builds widget/dist/widget.js from widget/src with Deno's own bundler
 * (esbuild inside): one minified IIFE for the browser. `deno task widget`
 * runs it; start and test run it first, and so does the image build. The
 * gateway only serves the file, and refuses to start without it.
 */
import { gzip } from "../services/lib/gzip.ts";

export const WIDGET_SOURCE = new URL("./src/main.ts", import.meta.url);
export const WIDGET_OUTPUT = new URL("./dist/widget.js", import.meta.url);

export function buildWidget(): Promise<Uint8Array> {
  return bundleForBrowser(WIDGET_SOURCE, WIDGET_OUTPUT);
}

/**
 * Bundles a browser script with Deno's own bundler (esbuild inside) into one
 * minified IIFE; the dashboard's build uses it too.
 */
export async function bundleForBrowser(source: URL, output: URL): Promise<Uint8Array> {
  await Deno.mkdir(new URL("./", output), { recursive: true });
  // Written aside and renamed into place, so a gateway reading it never sees half a file.
  const partial = `${output.pathname}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--minify",
      "--platform",
      "browser",
      "--format",
      "iife",
      "--output",
      partial,
      source.pathname,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    await Deno.remove(partial).catch(() => {});
    throw new Error(`build of ${source.pathname} failed: ${new TextDecoder().decode(stderr)}`);
  }
  const bytes = await Deno.readFile(partial);
  await Deno.rename(partial, output);
  return bytes;
}

/** Size of the script as browsers download it (gzip), in bytes. */
export async function gzippedSize(bytes: Uint8Array): Promise<number> {
  return (await gzip(bytes)).byteLength;
}

if (import.meta.main) {
  const bytes = await buildWidget();
  console.log(`widget.js: ${bytes.byteLength} bytes, ${await gzippedSize(bytes)} gzipped`);
}
