/** The image and its containers, driven through podman (installed by .ci/tools.sh). */
import { tool } from "./tools.ts";

export const PODMAN = tool("podman");
export const IMAGE = "localhost/crm:dev";
const ROOT = new URL("../..", import.meta.url).pathname;

export interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

export async function podman(args: string[], input?: string): Promise<Output> {
  const child = new Deno.Command(PODMAN!, {
    args,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** `deno task image`, as a user runs it; resolves with what it printed. */
export async function buildImage(): Promise<string> {
  const output = await new Deno.Command("deno", {
    args: ["task", "-q", "image"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const text = decoder.decode(output.stdout) + decoder.decode(output.stderr);
  if (output.code !== 0) throw new Error(`deno task image failed:\n${text}`);
  return text;
}
