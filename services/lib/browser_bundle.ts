/**
 * Building the browser's scripts (the widget and the dashboard), one way:
 * Deno's own bundler (esbuild inside) into one minified IIFE each, written
 * so that a gateway reading the file never sees half of it, and the size
 * browsers download, for the size budgets.
 */
import { compressSync } from "./compress.ts";

/**
 * Bundles a browser script with Deno's own bundler (esbuild inside) into one
 * minified IIFE.
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

/** Size of the script as a browser that takes only gzip downloads it, in bytes. */
export function gzippedSize(bytes: Uint8Array): Promise<number> {
  return Promise.resolve(compressSync(bytes, "gzip").byteLength);
}
