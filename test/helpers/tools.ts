/**
 * The real tools some tests drive (helm, kube-apiserver, the kubelet, jaeger,
 * toxiproxy-server, podman, ...), built or installed once per machine by
 * `.ci/tools.sh` into ~/.cache/crm-tools/bin.
 *
 * A test asks `tool(name)`: the tool's path, or undefined when it is not on
 * this machine, so the test can be skipped on a laptop without it. CI sets
 * CRM_REQUIRE_TOOLS=1 after running `.ci/tools.sh`: there a missing tool
 * throws, so a test never skips silently where it is meant to run.
 */
import { findTool } from "../../.ci/tools.ts";

export { findTool, TOOLS_BIN } from "../../.ci/tools.ts";

export const TOOLS_REQUIRED = Deno.env.get("CRM_REQUIRE_TOOLS") === "1";

/**
 * The path of a tool, or undefined when absent; throws when absent and CI
 * requires the tools (CRM_REQUIRE_TOOLS=1).
 */
export function tool(name: string): string | undefined {
  const path = findTool(name);
  if (!path && TOOLS_REQUIRED) {
    throw new Error(`${name} is required (CRM_REQUIRE_TOOLS=1) but not found: run .ci/tools.sh`);
  }
  return path;
}

/** True when every named tool is present (throws under CRM_REQUIRE_TOOLS=1 when one is not). */
export function haveTools(...names: string[]): boolean {
  return names.map(tool).every((path) => path !== undefined);
}
