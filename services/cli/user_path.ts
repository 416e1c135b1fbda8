/**
 * Paths given on the command line are the user's: `deno task` runs commands
 * in the repository folder, and says where the user was in INIT_CWD.
 */
import { isAbsolute, join } from "node:path";

export function userPath(path: string, initCwd = Deno.env.get("INIT_CWD")): string {
  return isAbsolute(path) || !initCwd ? path : join(initCwd, path);
}
