/**
 * Where `.ci/tools.sh` puts the real tools it builds or installs (helm,
 * sloth, kube-apiserver, jaeger, ...), and finding one: what the tests
 * (test/helpers/tools.ts) and the generators (helm/monitoring.ts) share.
 */
import { join } from "node:path";

export const TOOLS_BIN = Deno.env.get("CRM_TOOLS_BIN") ||
  join(Deno.env.get("HOME") ?? "/root", ".cache", "crm-tools", "bin");

function executable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The path of a tool, looked up in the tools folder, then on PATH. */
export function findTool(name: string): string | undefined {
  const candidates = [
    join(TOOLS_BIN, name),
    ...(Deno.env.get("PATH") ?? "").split(":").filter(Boolean).map((dir) => join(dir, name)),
  ];
  return candidates.find(executable);
}
