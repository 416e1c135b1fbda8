/** The image and its containers, driven through podman (installed by .ci/tools.sh). */
import { tool } from "./tools.ts";
import { runCommand, runTask, type TaskResult } from "./process.ts";

export const PODMAN = tool("podman");
export const IMAGE = "localhost/crm:dev";

export function podman(args: string[], input?: string): Promise<TaskResult> {
  return runCommand(PODMAN!, args, { input });
}

/** `deno task image`, as a user runs it; resolves with what it printed. */
export async function buildImage(): Promise<string> {
  const { code, stdout, stderr } = await runTask(["image"]);
  if (code !== 0) throw new Error(`deno task image failed:\n${stdout}${stderr}`);
  return stdout + stderr;
}
