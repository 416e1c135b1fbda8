/**
 * What a run of the command line reads and writes besides the services: its
 * settings, the folder relative paths start from, and its two outputs. The
 * process entry point passes the real ones (`processIo`); a test passes its
 * own and runs the command in its own process.
 */
import { userPath } from "./user_path.ts";

/** Text written as it is given: a line carries its own "\n". */
export interface TextSink {
  write(text: string): Promise<void>;
}

export interface CommandIo {
  /** The settings, as the process environment holds them. */
  env: Record<string, string>;
  /** The folder a relative path is read from when INIT_CWD does not name one. */
  cwd: string;
  stdout: TextSink;
  stderr: TextSink;
}

/** A path the user gave, as this run reads it: from INIT_CWD (`deno task`), else from cwd. */
export function pathOf(io: CommandIo, path: string): string {
  return userPath(path, io.env.INIT_CWD || io.cwd);
}

function fileSink(file: { write(bytes: Uint8Array): Promise<number> }): TextSink {
  const encoder = new TextEncoder();
  return {
    async write(text) {
      const bytes = encoder.encode(text);
      let offset = 0;
      while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
    },
  };
}

/** This process's environment, working folder, stdout and stderr. */
export function processIo(): CommandIo {
  return {
    env: Deno.env.toObject(),
    cwd: Deno.cwd(),
    stdout: fileSink(Deno.stdout),
    stderr: fileSink(Deno.stderr),
  };
}
