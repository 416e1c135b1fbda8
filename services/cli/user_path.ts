/**
 * Paths given on the command line are the user's: `deno task` runs commands
 * in the repository folder, and says where the user was in INIT_CWD.
 */
import { isAbsolute, join } from "node:path";

/** @param initCwd where the user was (INIT_CWD), if known */
export function userPath(path: string, initCwd: string | undefined): string {
  return isAbsolute(path) || !initCwd ? path : join(initCwd, path);
}
