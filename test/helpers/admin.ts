/**
 * `deno task admin ...` run in this process: the command line's own `main`
 * with this process's settings (and the test's on top, as a child of
 * `runTask` would see them), paths read from the repository's root, and
 * stdout and stderr kept. It saves a Deno start-up per command; the wiring
 * of the real task (exit codes, stderr, help) is `test/commands_test.ts`'s.
 */
import { main } from "../../services/cli/admin.ts";
import type { CommandIo } from "../../services/cli/command_io.ts";
import type { TaskResult } from "./process.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

export async function runAdmin(
  args: string[],
  env: Record<string, string> = {},
): Promise<TaskResult> {
  let stdout = "";
  let stderr = "";
  // `deno task` runs from the root and says so in INIT_CWD; the test's cwd may be anywhere.
  const { INIT_CWD: _, ...inherited } = Deno.env.toObject();
  const io: CommandIo = {
    env: { ...inherited, LOG_LEVEL: "error", ...env },
    cwd: ROOT,
    stdout: {
      write(text) {
        stdout += text;
        return Promise.resolve();
      },
    },
    stderr: {
      write(text) {
        stderr += text;
        return Promise.resolve();
      },
    },
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
